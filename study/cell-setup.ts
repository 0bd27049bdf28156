/**
 * A cell's setup in words, from the config its runs recorded: what the report's setup table
 * states for each cell (workflow, estimator, weights, models, sizes).
 */
import type { NormalizedConfig } from "../engine/config/mod.ts";

/** The setup columns of one cell. */
export interface CellSetup {
  readonly workflow: string;
  readonly estimator: string;
  readonly weights: string;
  readonly models: string;
  readonly trainable: string;
  readonly lr: string;
  readonly steps: number;
  readonly batch: string;
  readonly sampling: string;
  readonly tasks: string;
  readonly evaluation: string;
  /**
   * PPO updates per rollout batch and the policy loss; absent from a study.json written before
   * the report stated them (v1).
   */
  readonly updates?: string;
  /**
   * The reward's components and the invalid-action penalty; absent from a study.json written
   * before the report stated them (v1, v2).
   */
  readonly rewards?: string;
}

function distinct(values: readonly string[]): string[] {
  return [...new Set(values)];
}

function workflowText(w: NormalizedConfig["workflow"]): string {
  switch (w.kind) {
    case "refine":
      return `refine (max ${w.max_loops} loops)`;
    case "search":
      return `search (max ${w.max_turns} turns, top ${w.top_k})`;
    case "debate":
      return `debate (${w.generators} generators, ${w.critics} critics, ${w.rounds} rounds)`;
    case "custom":
      return `custom (${w.module})`;
  }
}

function trainableText(t: NormalizedConfig["agents"][number]["trainable"]): string {
  if (t.kind === "lora") {
    return `LoRA r${t.rank} α${t.alpha}${t.dropout ? ` dropout ${t.dropout}` : ""} on ` +
      t.targets.join(", ");
  }
  return t.kind;
}

function tasksText(t: NormalizedConfig["tasks"]): string {
  switch (t.kind) {
    case "synthetic-math":
      return `synthetic math, difficulty ${t.difficulty}; ${t.splits.train} train, ` +
        `${t.splits.validation} validation, ${t.splits.test} test problems`;
    case "synthetic-search": {
      // "2 hops" is at most 2 (one- and two-hop questions); a minimum is stated when it is set.
      const min = t.min_hops ?? 1;
      const hops = min === 1
        ? `${t.max_hops} hops`
        : min === t.max_hops
        ? `${t.max_hops} hops only`
        : `${min} to ${t.max_hops} hops`;
      return `synthetic search, ${t.documents} documents, ${hops}`;
    }
    case "math-files":
      return `math files (${t.train})`;
  }
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function updatesText(config: NormalizedConfig): string {
  const { mini_batches, epochs } = config.updates;
  const { clip_eps_low, clip_eps_high, kl_coef, aggregation, entropy_coeff } = config.loss;
  const clip = clip_eps_low === clip_eps_high
    ? `clip ${clip_eps_low}`
    : `clip ${clip_eps_low}/${clip_eps_high}`;
  return `${count(mini_batches, "mini-batch", "mini-batches")} × ` +
    `${count(epochs, "epoch", "epochs")}; ` +
    `${clip}, KL ${kl_coef}, ${aggregation}` +
    // Stated only where it is on, so that earlier studies' lines (entropy 0) read the same.
    (entropy_coeff > 0 ? `, entropy ${entropy_coeff}` : "");
}

function rewardsText(r: NormalizedConfig["rewards"]): string {
  const weights = Object.entries(r.weights).map(([k, w]) => `${w} × ${k}`).join(" + ");
  return `${weights}; invalid-action penalty ${r.invalid_action_penalty}`;
}

/**
 * Describes a recorded config.
 *
 * @example
 * ```ts
 * import { parseConfig, presetInput } from "../engine/config/mod.ts";
 * cellSetup(parseConfig(presetInput("refine-grpo"))).weights; // "separate (2 worker groups)"
 * ```
 */
export function cellSetup(config: NormalizedConfig): CellSetup {
  const shared = config.worker_groups.filter((g) => g.agents.length > 1);
  const models = distinct(config.agents.map((a) => a.model));
  return {
    workflow: workflowText(config.workflow),
    estimator: `${config.estimator.kind} (${config.estimator.sigma} σ)`,
    weights: shared.length === 0
      ? `separate (${config.worker_groups.length} worker groups)`
      : `shared (${shared.map((g) => g.agents.join("+")).join("; ")})`,
    models: models.length === 1
      ? models[0]
      : config.agents.map((a) => `${a.id}: ${a.model}`).join(", "),
    trainable: distinct(config.agents.map((a) => trainableText(a.trainable))).join("; "),
    lr: distinct(config.agents.map((a) => String(a.optimizer.lr))).join(", "),
    steps: config.steps,
    batch: `${config.batch_size} prompts × ${config.group_size} samples`,
    sampling: `≤ ${config.sampling.max_tokens} tokens, T = ${config.sampling.temperature}`,
    tasks: tasksText(config.tasks),
    evaluation: `${config.evaluation.benchmarks.join(", ")} × ${config.evaluation.n_samples} ` +
      `samples per problem`,
    updates: updatesText(config),
    rewards: rewardsText(config.rewards),
  };
}
