/**
 * Rules that span several keys: unique ids, debate rounds and critics, estimator fit (the
 * workflow and reward weights its registry entry declares), the episodes of one rollout. The roles a workflow needs are its own declaration (`Workflow.roles`),
 * checked when the workflow is built (engine/workflows/roles.ts), so custom workflows are checked
 * like the built-in ones.
 */
import { isPostgresUrl } from "../../events/mod.ts";
import { ESTIMATOR_NAMES, estimatorEntry } from "../advantages/mod.ts";
import { MAX_ROLLOUT_EPISODES } from "./bounds.ts";
import type { ConfigIssue } from "./errors.ts";
import type { ExperimentConfig } from "./schema.ts";

function checkIds(config: ExperimentConfig): ConfigIssue[] {
  const seen = new Map<string, number>();
  const issues: ConfigIssue[] = [];
  config.agents.forEach((a, i) => {
    const j = seen.get(a.id);
    if (j !== undefined) {
      issues.push({
        key: `agents[${i}].id`,
        value: a.id,
        allowed: `an id not already used (agents[${j}])`,
      });
    } else seen.set(a.id, i);
  });
  return issues;
}

function checkDebate(config: ExperimentConfig): ConfigIssue[] {
  const w = config.workflow;
  if (w.kind !== "debate") return [];
  if (w.rounds === 1 && w.critics > 0) {
    return [{
      key: "workflow.critics",
      value: w.critics,
      allowed: "0 when rounds is 1 (critics act from round 2 on)",
    }];
  }
  if (w.rounds > 1 && w.critics === 0) {
    return [{ key: "workflow.critics", value: w.critics, allowed: "at least 1 when rounds > 1" }];
  }
  return [];
}

/** An estimator whose registry entry names a workflow (its rewards read that workflow's roles). */
function checkEstimator(config: ExperimentConfig): ConfigIssue[] {
  const kind = config.estimator.kind;
  const needed = estimatorEntry(kind).workflow;
  if (needed === undefined || needed === config.workflow.kind) return [];
  const fitting = ESTIMATOR_NAMES.filter((name) => {
    const workflow = estimatorEntry(name).workflow;
    return workflow === undefined || workflow === config.workflow.kind;
  });
  return [{
    key: "estimator.kind",
    value: kind,
    allowed: `an estimator for a ${config.workflow.kind} workflow (${kind} needs workflow.kind ` +
      `"${needed}"): one of ${fitting.join(", ")}`,
  }];
}

function checkRewards(config: ExperimentConfig): ConfigIssue[] {
  const weights = Object.entries(config.rewards.weights);
  const issues: ConfigIssue[] = weights
    .filter(([, w]) => !Number.isFinite(w))
    .map(([name, w]) => ({ key: `rewards.weights.${name}`, value: w, allowed: "a finite number" }));
  const kind = config.estimator.kind;
  if (estimatorEntry(kind).rewards === "mada") {
    // MADA-RL's reward is `accuracy * acc + length * len` per answer; other parts have no place in it.
    for (const [name, w] of weights) {
      if (name !== "accuracy" && name !== "length") {
        issues.push({
          key: `rewards.weights.${name}`,
          value: w,
          allowed:
            `only accuracy and length weights under estimator ${kind} (its reward is a·acc + l·len)`,
        });
      }
    }
  }
  if (weights.length === 0) {
    issues.push({ key: "rewards.weights", value: {}, allowed: "at least one weighted component" });
  }
  return issues;
}

function checkRolloutSize(config: ExperimentConfig): ConfigIssue[] {
  const episodes = config.batch_size * config.group_size;
  if (episodes <= MAX_ROLLOUT_EPISODES) return [];
  return [{
    key: "batch_size",
    value: config.batch_size,
    allowed: `batch_size * group_size <= ${MAX_ROLLOUT_EPISODES} episodes per step (a step's ` +
      `episodes are generated and held at once; group_size is ${config.group_size}, so ` +
      `batch_size <= ${Math.floor(MAX_ROLLOUT_EPISODES / config.group_size)})`,
  }];
}

function checkSearchHops(config: ExperimentConfig): ConfigIssue[] {
  const t = config.tasks;
  if (t.kind !== "synthetic-search" || t.min_hops === undefined || t.min_hops <= t.max_hops) {
    return [];
  }
  return [{
    key: "tasks.min_hops",
    value: t.min_hops,
    allowed: `at most tasks.max_hops (${t.max_hops})`,
  }];
}

function checkEvaluationSize(config: ExperimentConfig): ConfigIssue[] {
  const t = config.tasks;
  if (t.kind === "math-files") return []; // file sizes are known once loaded (eval checks them)
  const problems = config.evaluation.benchmarks
    .map((b) => b === "validation" || b === "test" ? t.splits[b] : 0)
    .reduce((sum, n) => sum + n, 0);
  const episodes = problems * config.evaluation.n_samples;
  if (episodes <= MAX_ROLLOUT_EPISODES) return [];
  return [{
    key: "evaluation.n_samples",
    value: config.evaluation.n_samples,
    allowed: `problems * n_samples <= ${MAX_ROLLOUT_EPISODES} episodes per evaluation (they are ` +
      `generated and held at once; the evaluated splits hold ${problems} problems)`,
  }];
}

/**
 * The openai rollout backend: servers to send turns to, one base model they all serve, adapters
 * written where the servers read them, and no full-weight training (a server here has no path
 * to load new full weights: deno task serve has none, and vLLM's and SGLang's weight-update
 * paths need a collective with the trainer).
 */
function checkRolloutBackend(config: ExperimentConfig): ConfigIssue[] {
  const r = config.rollout;
  const issues: ConfigIssue[] = [];
  if (r?.dispatch === "workers" && !isPostgresUrl(config.store)) {
    issues.push({
      key: "store",
      value: config.store,
      allowed: 'a postgres:// URL with rollout.dispatch "workers": the workers take episodes ' +
        "from a queue in the run's Postgres database (e.g. --store postgres://host/db)",
    });
  }
  if (r?.backend !== "openai") return issues;
  if (r.endpoints.length === 0) {
    issues.push({
      key: "rollout.endpoints",
      value: r.endpoints,
      allowed: 'at least one server URL with backend "openai", e.g. ["http://127.0.0.1:8000"]',
    });
  }
  const models = [...new Set(config.agents.map((a) => a.model))];
  if (models.length > 1) {
    issues.push({
      key: "agents[].model",
      value: models,
      allowed: 'one base model for every agent with backend "openai" (a server serves one base)',
    });
  }
  config.agents.forEach((a, i) => {
    if (a.trainable.kind === "full") {
      issues.push({
        key: `agents[${i}].trainable.kind`,
        value: "full",
        allowed: 'lora or frozen with rollout.backend "openai": the servers have no weight-' +
          'update path for full weights here; train full weights with backend "local"',
      });
    }
  });
  if (r.adapter_dir === undefined && config.agents.some((a) => a.trainable.kind === "lora")) {
    issues.push({
      key: "rollout.adapter_dir",
      value: undefined,
      allowed: "a folder every server reads (deno task serve: under its --lora-dir), where each " +
        "LoRA group's adapter is written after its updates",
    });
  }
  if (r.tis_cap > 0 && config.updates.old_logprobs !== "recompute") {
    issues.push({
      key: "updates.old_logprobs",
      value: config.updates.old_logprobs,
      allowed: "recompute with rollout.tis_cap > 0 (the weights compare the trainer's own " +
        "logprobs with the server's), or set rollout.tis_cap to 0",
    });
  }
  return issues;
}

/** All cross-key issues of a config that passed the schema. */
export function crossCheck(config: ExperimentConfig): ConfigIssue[] {
  return [
    ...checkIds(config),
    ...checkDebate(config),
    ...checkEstimator(config),
    ...checkRewards(config),
    ...checkRolloutSize(config),
    ...checkSearchHops(config),
    ...checkEvaluationSize(config),
    ...checkRolloutBackend(config),
  ];
}
