/**
 * The DuckDB base tables projected from the log, one declaration each, in creation order: what
 * each holds, the events whose rows it holds and how each column is read from them. The DDL, the
 * appended rows, the Kysely row types (analysis/queries/analysis-db.ts), analysis/TABLES.md's
 * "Base tables" section (`deno task docs`) and the schema version derive from these; the views
 * over them are SQL in schema.ts. Rows append, never update; every row carries its run (or, in
 * `log_events`, its stream). Column names are stable: add columns, never rename them.
 *
 * A table for a new event type is one more `eventTable` here (docs/ARCHITECTURE.md, "Where to
 * add").
 */
import { type EventType, failedRunStatus, runCatalogue, type RunLease } from "../../events/mod.ts";
import {
  eventTable,
  type EventTableDeclaration,
  sourceTable,
  type TableDeclaration,
} from "./define-table.ts";
import { agentRoles, flattenConfig } from "./flatten-config.ts";

/** JSON text of a record of floats, keeping NaN and infinities visible (JSON would null them). */
function floatsJson(record: Readonly<Record<string, number>>): string {
  const keys = Object.keys(record).sort();
  return `{${
    keys.map((k) => {
      const v = record[k];
      return `${JSON.stringify(k)}:${Number.isFinite(v) ? JSON.stringify(v) : `"${v}"`}`;
    }).join(",")
  }}`;
}

function meanOf(xs: Float32Array): number | null {
  if (xs.length === 0) return null;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** A record's entries sorted by key: rows in an order that does not depend on insertion. */
function sortedEntries<V>(record: Readonly<Record<string, V>>): [string, V][] {
  return Object.entries(record).sort(([a], [b]) => a < b ? -1 : 1);
}

const RUN = "the run (its stream id)";

/** An evaluation's step; a run of 0 steps records its one evaluation at step 0 too. */
const EVALUATED_STEP =
  "the step evaluated after (0 also in a run of 0 steps, which evaluates its initial team)";

const runStarted = eventTable({
  name: "run_started",
  about: "One row per `run.started`: how the run was configured and where it ran. Query the " +
    "`runs` view.",
  events: ["run.started"],
  rows: (e) => [e],
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (e) => e.stream },
  position: {
    type: "BIGINT",
    meaning: "global log position of the event",
    value: (e) => e.position,
  },
  recorded_at_ms: {
    type: "BIGINT",
    meaning: "wall clock at append, ms since the Unix epoch",
    value: (e) => e.recordedAt,
  },
  seed: { type: "BIGINT", meaning: "the run's seed", value: (e) => e.data.seed },
  config_hash: {
    type: "VARCHAR",
    meaning: "SHA-256 of the normalized config's canonical JSON",
    value: (e) => e.data.configHash,
  },
  code_version: {
    type: "VARCHAR",
    meaning: "the code that recorded the run",
    value: (e) => e.data.codeVersion,
  },
  execution_provider: {
    type: "VARCHAR",
    meaning: "`cpu`, `wasm`, `webgpu`, ...",
    value: (e) => e.data.runtime.executionProvider,
  },
  config_json: {
    type: "VARCHAR",
    meaning: "the whole config as JSON",
    value: (e) => JSON.stringify(e.data.config),
  },
  runtime_json: {
    type: "VARCHAR",
    meaning: "the runtime record (Deno, onnxruntime, adapter, threads, ...) as JSON",
    value: (e) => JSON.stringify(e.data.runtime),
  },
});

const runBenchmarks = eventTable({
  name: "run_benchmarks",
  about: "One row per run and evaluated benchmark: what the run evaluates on, by content, as " +
    "its `run.started` recorded it (id, problem and answer of every problem, canonical JSON). " +
    "Runs recorded before it have no rows.",
  events: ["run.started"],
  rows: (e) =>
    sortedEntries(e.data.benchmarks ?? {}).map(([benchmark, b]) => ({ e, benchmark, b })),
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (r) => r.e.stream },
  benchmark: {
    type: "VARCHAR",
    meaning: "the name its `evaluation.completed` events carry",
    value: (r) => r.benchmark,
  },
  problems: { type: "BIGINT", meaning: "problems in the benchmark", value: (r) => r.b.problems },
  sha256: {
    type: "VARCHAR",
    meaning: "SHA-256 of the problems: two runs evaluated on the same problems have the same",
    value: (r) => r.b.sha256,
  },
});

const runConfig = eventTable({
  name: "run_config",
  about: "Every config leaf, flattened: what `deno task report --group-by KEY` groups on, " +
    "besides the `runs` view's estimator, workflow, seed and models.",
  events: ["run.started"],
  rows: (e) => flattenConfig(e.data.config).map(([key, value]) => ({ e, key, value })),
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (r) => r.e.stream },
  key: {
    type: "VARCHAR",
    meaning: "dotted path (`optimizer.lr`, `agents.0.role`)",
    value: (r) => r.key,
  },
  value: {
    type: "VARCHAR",
    meaning: "text: strings as they are, numbers in shortest round-trip form, booleans " +
      "`true`/`false`",
    value: (r) => r.value,
  },
});

const agentRolesTable = eventTable({
  name: "agent_roles",
  about: "The agents' roles named in the config: objects with `name`/`id`/`agent` and `role`, " +
    "or records keyed by agent name with a `role` (the first found wins). The `turns` view " +
    "reads a turn's role from here where the turn did not record one.",
  events: ["run.started"],
  rows: (e) => agentRoles(e.data.config).map(([agent, role]) => ({ e, agent, role })),
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (r) => r.e.stream },
  agent: { type: "VARCHAR", meaning: "the agent", value: (r) => r.agent },
  role: { type: "VARCHAR", meaning: "its role", value: (r) => r.role },
});

const runEnded = eventTable({
  name: "run_ended",
  about: "One row per `run.completed` or `run.failed`: where each attempt of a run ended. " +
    "Query the `runs` and `run_attempts` views.",
  events: ["run.completed", "run.failed"],
  rows: (e) => [e],
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (e) => e.stream },
  position: {
    type: "BIGINT",
    meaning: "global log position of the event",
    value: (e) => e.position,
  },
  version: {
    type: "BIGINT",
    meaning: "the event's version in the run's stream: the next attempt begins at version + 1",
    value: (e) => e.version,
  },
  recorded_at_ms: {
    type: "BIGINT",
    meaning: "wall clock at append, ms since the Unix epoch",
    value: (e) => e.recordedAt,
  },
  status: {
    type: "VARCHAR",
    meaning: "`completed`, `failed`, or `interrupted` (a `run.failed` of stage `interrupted`)",
    value: (e) => e.type === "run.completed" ? "completed" : failedRunStatus(e.data),
  },
  steps: {
    type: "BIGINT",
    meaning: "steps run (`run.completed`; NULL on a failure)",
    value: (e) => e.type === "run.completed" ? e.data.steps : null,
  },
  metrics_json: {
    type: "VARCHAR",
    meaning: "the final metrics (`run.completed`; NULL on a failure)",
    value: (e) => e.type === "run.completed" ? floatsJson(e.data.metrics) : null,
  },
  failed_step: {
    type: "BIGINT",
    meaning: "the step it stopped in (`run.failed`)",
    value: (e) => e.type === "run.failed" ? e.data.step : null,
  },
  failed_stage: {
    type: "VARCHAR",
    meaning: "what it was doing: `rollout`, `update`, ..., `interrupted` (`run.failed`)",
    value: (e) => e.type === "run.failed" ? e.data.stage : null,
  },
  error: {
    type: "VARCHAR",
    meaning: "`name: message` of the failure (`run.failed`)",
    value: (e) => e.type === "run.failed" ? `${e.data.error.name}: ${e.data.error.message}` : null,
  },
});

const workerGroups = eventTable({
  name: "worker_groups",
  about: "One row per worker group, from `policy.initialized`.",
  events: ["policy.initialized"],
  rows: (e) => [e],
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (e) => e.stream },
  wg: { type: "VARCHAR", meaning: "the worker group", value: (e) => e.data.workerGroup },
  agents: {
    type: "VARCHAR",
    meaning: "its agents, comma-separated",
    value: (e) => e.data.agents.join(","),
  },
  model: { type: "VARCHAR", meaning: "the model", value: (e) => e.data.model },
  source: {
    type: "VARCHAR",
    meaning: "where the weights came from: a checkpoint path, a pretraining run, `random`",
    value: (e) => e.data.source,
  },
  parameter_count: {
    type: "BIGINT",
    meaning: "parameters",
    value: (e) => e.data.parameterCount,
  },
  trainable_parameter_count: {
    type: "BIGINT",
    meaning: "trainable parameters (a LoRA adapter's, with LoRA)",
    value: (e) => e.data.trainableParameterCount,
  },
  parameter_hash: {
    type: "VARCHAR",
    meaning: "SHA-256 of the initial parameters",
    value: (e) => e.data.parameterHash,
  },
});

const placements = eventTable({
  name: "placements",
  about: "Worker-group loads and offloads on the device pool, one row per " +
    "`worker_group.loaded` or `worker_group.offloaded`.",
  events: ["worker_group.loaded", "worker_group.offloaded"],
  rows: (e) => [e],
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (e) => e.stream },
  step: { type: "BIGINT", meaning: "the step", value: (e) => e.data.step },
  wg: { type: "VARCHAR", meaning: "the worker group", value: (e) => e.data.workerGroup },
  seq: { type: "BIGINT", meaning: "order within the step", value: (e) => e.data.seq },
  action: {
    type: "VARCHAR",
    meaning: "`load` or `offload`",
    value: (e) => e.type === "worker_group.loaded" ? "load" : "offload",
  },
  device: { type: "VARCHAR", meaning: "the device", value: (e) => e.data.device },
  bytes: { type: "BIGINT", meaning: "bytes placed", value: (e) => e.data.bytes },
});

const steps = eventTable({
  name: "steps",
  about: "One row per `step.started`; the prompts themselves are in `step_prompts`.",
  events: ["step.started"],
  rows: (e) => [e],
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (e) => e.stream },
  step: { type: "BIGINT", meaning: "the step", value: (e) => e.data.step },
  group_size: {
    type: "BIGINT",
    meaning: "samples per prompt",
    value: (e) => e.data.groupSize,
  },
  prompts: { type: "BIGINT", meaning: "prompt groups", value: (e) => e.data.prompts.length },
  position: {
    type: "BIGINT",
    meaning: "global log position of the event",
    value: (e) => e.position,
  },
  recorded_at_ms: {
    type: "BIGINT",
    meaning: "wall clock at append, ms since the Unix epoch",
    value: (e) => e.recordedAt,
  },
});

const stepPrompts = eventTable({
  name: "step_prompts",
  about: "The prompt groups of each step, from `step.started`.",
  events: ["step.started"],
  rows: (e) => e.data.prompts.map((p) => ({ e, p })),
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (r) => r.e.stream },
  step: { type: "BIGINT", meaning: "the step", value: (r) => r.e.data.step },
  prompt: { type: "BIGINT", meaning: "the prompt group", value: (r) => r.p.prompt },
  problem_id: { type: "VARCHAR", meaning: "the task's problem", value: (r) => r.p.problemId },
});

const turnEvents = eventTable({
  name: "turn_events",
  about: "One row per `turn.generated`, as recorded. Query the `turns` view, which adds the " +
    "role and grading of turns from older logs and the debate round.",
  events: ["turn.generated"],
  rows: (e) => [e],
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (e) => e.stream },
  step: { type: "BIGINT", meaning: "the step", value: (e) => e.data.step },
  phase: { type: "VARCHAR", meaning: "`rollout` or `eval`", value: (e) => e.data.phase },
  trajectory: { type: "VARCHAR", meaning: "the trajectory", value: (e) => e.data.trajectory },
  prompt: { type: "BIGINT", meaning: "the prompt group", value: (e) => e.data.prompt },
  sample: { type: "BIGINT", meaning: "the sample in its group", value: (e) => e.data.sample },
  turn: { type: "BIGINT", meaning: "the turn in its trajectory", value: (e) => e.data.turn },
  agent: { type: "VARCHAR", meaning: "the agent", value: (e) => e.data.agent },
  role: {
    type: "VARCHAR",
    meaning: "the agent's role; NULL in logs from before `turn.generated` v2",
    value: (e) => e.data.role,
  },
  wg: { type: "VARCHAR", meaning: "the worker group", value: (e) => e.data.workerGroup },
  prompt_tokens: {
    type: "BIGINT",
    meaning: "tokens the agent saw",
    value: (e) => e.data.promptTokens.length,
  },
  response_tokens: {
    type: "BIGINT",
    meaning: "tokens it produced",
    value: (e) => e.data.responseTokens.length,
  },
  finish_reason: {
    type: "VARCHAR",
    meaning: "`stop`, `length`, `abort`",
    value: (e) => e.data.finishReason,
  },
  parsed_answer: {
    type: "VARCHAR",
    meaning: "the answer parsed from the output, NULL when none",
    value: (e) => e.data.parsedAnswer,
  },
  correct: {
    type: "BOOLEAN",
    meaning: "the turn's own answer graded; NULL when it gave none, or before v2",
    value: (e) => e.data.correct,
  },
  mean_logprob: {
    type: "DOUBLE",
    meaning: "mean of the response token logprobs",
    value: (e) => meanOf(e.data.logprobs),
  },
  position: {
    type: "BIGINT",
    meaning: "global log position of the event",
    value: (e) => e.position,
  },
  text: { type: "VARCHAR", meaning: "the decoded output text", value: (e) => e.data.text },
});

const trajectories = eventTable({
  name: "trajectories",
  about: "One row per `trajectory.completed`.",
  events: ["trajectory.completed"],
  rows: (e) => [e],
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (e) => e.stream },
  step: { type: "BIGINT", meaning: "the step", value: (e) => e.data.step },
  phase: { type: "VARCHAR", meaning: "`rollout` or `eval`", value: (e) => e.data.phase },
  trajectory: { type: "VARCHAR", meaning: "the trajectory", value: (e) => e.data.trajectory },
  prompt: { type: "BIGINT", meaning: "the prompt group", value: (e) => e.data.prompt },
  sample: { type: "BIGINT", meaning: "the sample in its group", value: (e) => e.data.sample },
  problem_id: { type: "VARCHAR", meaning: "the task's problem", value: (e) => e.data.problemId },
  turns: { type: "BIGINT", meaning: "turns taken", value: (e) => e.data.turns },
  agents: {
    type: "VARCHAR",
    meaning: "the agents that acted, comma-separated",
    value: (e) => e.data.agents.join(","),
  },
  final_answer: {
    type: "VARCHAR",
    meaning: "the trajectory's answer, NULL when none",
    value: (e) => e.data.finalAnswer,
  },
  correct: {
    type: "BOOLEAN",
    meaning: "the final answer graded; NULL when the task has no reference",
    value: (e) => e.data.correct,
  },
  tokens: { type: "BIGINT", meaning: "tokens of the trajectory", value: (e) => e.data.tokens },
  termination_reason: {
    type: "VARCHAR",
    meaning: "`answered`, `max_turns`, `max_tokens`, `invalid_action`, ...",
    value: (e) => e.data.terminationReason,
  },
  question: {
    type: "VARCHAR",
    meaning: "the task's question as the workflow received it; NULL before " +
      "`trajectory.completed` v2",
    value: (e) => e.data.question,
  },
  gold: {
    type: "VARCHAR",
    meaning: "its reference answer; NULL when the task has none, or before v2",
    value: (e) => e.data.gold,
  },
});

const rewards = eventTable({
  name: "rewards",
  about: "One row per `reward.assigned`.",
  events: ["reward.assigned"],
  rows: (e) => [e],
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (e) => e.stream },
  step: { type: "BIGINT", meaning: "the step", value: (e) => e.data.step },
  phase: { type: "VARCHAR", meaning: "`rollout` or `eval`", value: (e) => e.data.phase },
  trajectory: { type: "VARCHAR", meaning: "the trajectory", value: (e) => e.data.trajectory },
  prompt: { type: "BIGINT", meaning: "the prompt group", value: (e) => e.data.prompt },
  sample: { type: "BIGINT", meaning: "the sample in its group", value: (e) => e.data.sample },
  agent: {
    type: "VARCHAR",
    meaning: "the agent rewarded; NULL: the trajectory's reward",
    value: (e) => e.data.agent,
  },
  total: { type: "DOUBLE", meaning: "the reward", value: (e) => e.data.total },
  components_json: {
    type: "VARCHAR",
    meaning: 'its parts, e.g. `{"acc":1,"len":-0.2}` (non-finite values as strings ' +
      '`"NaN"`, `"Infinity"`; read with `components_json->>\'acc\'`)',
    value: (e) => floatsJson(e.data.components),
  },
});

const advantageGroups = eventTable({
  name: "advantage_groups",
  about: "The estimator and statistics of each prompt group, one row per " +
    "`advantages.computed`; the `advantages` view joins them to each entry.",
  events: ["advantages.computed"],
  rows: (e) => [e],
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (e) => e.stream },
  step: { type: "BIGINT", meaning: "the step", value: (e) => e.data.step },
  prompt: { type: "BIGINT", meaning: "the prompt group", value: (e) => e.data.prompt },
  estimator: {
    type: "VARCHAR",
    meaning: "the config's estimator.kind: `grpo`, `dr-mas`, `reinforce++`, `mada`, ...",
    value: (e) => e.data.estimator,
  },
  scope: {
    type: "VARCHAR",
    meaning: "what the statistics ranged over: `group` (the prompt group), `batch` (the step's " +
      "whole batch, REINFORCE++-baseline) or `role` (the group, a rule per workflow role: " +
      "MADA-RL); logs from before v3 read `group` (`role` for estimator `mada`)",
    value: (e) => e.data.scope,
  },
  sigma_convention: {
    type: "VARCHAR",
    meaning: "`population` (divide by n) or `unbiased` (n - 1)",
    value: (e) => e.data.sigmaConvention,
  },
  eps: { type: "DOUBLE", meaning: "the estimator's eps", value: (e) => e.data.eps },
  batch_mu: {
    type: "DOUBLE",
    meaning: "batch-scope mean, the same on every prompt group of the step; NULL for other " +
      "scopes and before `advantages.computed` v3",
    value: (e) => e.data.baseline.batch?.mu ?? null,
  },
  batch_sigma: {
    type: "DOUBLE",
    meaning: "batch-scope sigma (as batch_mu)",
    value: (e) => e.data.baseline.batch?.sigma ?? null,
  },
  batch_n: {
    type: "BIGINT",
    meaning: "the step's response tokens (as batch_mu)",
    value: (e) => e.data.baseline.batch?.n ?? null,
  },
});

const baselines = eventTable({
  name: "baselines",
  about: "The baseline statistics of each prompt group: its global row (agent NULL), then one " +
    "per agent, from `advantages.computed`. Batch statistics are never rows here (they are in " +
    "`advantage_groups`): the NULL agent row is always the prompt group's global baseline.",
  events: ["advantages.computed"],
  rows: (e) => [
    { e, agent: null, stats: { ...e.data.baseline.global, multiplier: null } },
    ...sortedEntries(e.data.baseline.perAgent).map(([agent, stats]) => ({ e, agent, stats })),
  ],
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (r) => r.e.stream },
  step: { type: "BIGINT", meaning: "the step", value: (r) => r.e.data.step },
  prompt: { type: "BIGINT", meaning: "the prompt group", value: (r) => r.e.data.prompt },
  agent: {
    type: "VARCHAR",
    meaning: "the agent; NULL: the group's global baseline (trajectory-weighted)",
    value: (r) => r.agent,
  },
  mu: { type: "DOUBLE", meaning: "mean", value: (r) => r.stats.mu },
  sigma: {
    type: "DOUBLE",
    meaning: "spread, under the group's sigma_convention",
    value: (r) => r.stats.sigma,
  },
  n: { type: "BIGINT", meaning: "values the statistics took", value: (r) => r.stats.n },
  multiplier: {
    type: "DOUBLE",
    meaning: "the agent's Lemma 4.2 multiplier as the engine recorded it; NULL on the global " +
      "row and where it recorded none",
    value: (r) => r.stats.multiplier,
  },
});

const advantageRows = eventTable({
  name: "advantage_rows",
  about: "One row per advantage entry of `advantages.computed`. Query the `advantages` view, " +
    "which joins the group's statistics.",
  events: ["advantages.computed"],
  rows: (e) => e.data.advantages.map((a) => ({ e, a })),
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (r) => r.e.stream },
  step: { type: "BIGINT", meaning: "the step", value: (r) => r.e.data.step },
  prompt: { type: "BIGINT", meaning: "the prompt group", value: (r) => r.e.data.prompt },
  trajectory: { type: "VARCHAR", meaning: "the trajectory", value: (r) => r.a.trajectory },
  sample: { type: "BIGINT", meaning: "the sample in its group", value: (r) => r.a.sample },
  agent: { type: "VARCHAR", meaning: "the agent", value: (r) => r.a.agent },
  turn: { type: "BIGINT", meaning: "the turn in its trajectory", value: (r) => r.a.turn },
  advantage: { type: "DOUBLE", meaning: "the advantage", value: (r) => r.a.advantage },
  reward: {
    type: "DOUBLE",
    meaning: "the action's own reward (after any penalty); NULL before v3",
    value: (r) => r.a.reward,
  },
  score: {
    type: "DOUBLE",
    meaning: "the value normalized: its reward, or its trajectory's score; NULL before v3",
    value: (r) => r.a.score,
  },
});

const gradSteps = eventTable({
  name: "grad_steps",
  about: `One row per optimizer update of a worker group (\`gradient_step.applied\`).

With PPO epochs and mini-batches a step has several updates per worker group, numbered in the order
applied: \`update\` = \`epoch\` × (mini-batches per epoch) + \`mini_batch\`. A per-step figure must say
which update it takes (\`WHERE "update" = 0\`, the last one with \`max_by\`, or an aggregate over them);
a sum or count over \`grad_steps\` counts updates, not steps (\`tokens\` is per update, so summing it
counts a turn once per epoch). Non-finite gradient norms stay NaN/Infinity. Logs from before
\`gradient_step.applied\` v2 (one update per step) read \`epoch = mini_batch = 0\`,
\`old_logprobs = 'rollout'\` and NULL clip range, temperature, LoRA dropout and drift.`,
  events: ["gradient_step.applied"],
  rows: (e) => [e],
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (e) => e.stream },
  step: { type: "BIGINT", meaning: "the step", value: (e) => e.data.step },
  wg: { type: "VARCHAR", meaning: "the worker group", value: (e) => e.data.workerGroup },
  update: {
    type: "BIGINT",
    meaning: "index within the step: epoch × mini-batches + mini_batch",
    value: (e) => e.data.update,
  },
  epoch: { type: "BIGINT", meaning: "the PPO epoch", value: (e) => e.data.epoch },
  mini_batch: {
    type: "BIGINT",
    meaning: "the mini-batch within the epoch",
    value: (e) => e.data.miniBatch,
  },
  agents: {
    type: "VARCHAR",
    meaning: "the agents trained, comma-separated",
    value: (e) => e.data.agents.join(","),
  },
  loss: { type: "DOUBLE", meaning: "`losses.total`", value: (e) => e.data.losses.total ?? null },
  losses_json: {
    type: "VARCHAR",
    meaning: "the loss parts: policy, kl, entropy, total, ...",
    value: (e) => floatsJson(e.data.losses),
  },
  grad_norm: {
    type: "DOUBLE",
    meaning: "gradient norm before clipping",
    value: (e) => e.data.gradNormBeforeClip,
  },
  grad_norm_after_clip: {
    type: "DOUBLE",
    meaning: "gradient norm after clipping",
    value: (e) => e.data.gradNormAfterClip,
  },
  agent_grad_norms_json: {
    type: "VARCHAR",
    meaning: "per-agent gradient norms, when measured",
    value: (e) => floatsJson(e.data.agentGradNorms),
  },
  clip_fraction: {
    type: "DOUBLE",
    meaning: "share of tokens whose ratio was clipped",
    value: (e) => e.data.clipFraction,
  },
  kl: {
    type: "DOUBLE",
    meaning: "token mean of old - new logprob (k1 estimate of KL(old || new))",
    value: (e) => e.data.kl,
  },
  entropy: { type: "DOUBLE", meaning: "token mean entropy", value: (e) => e.data.entropy },
  lr: { type: "DOUBLE", meaning: "learning rate of the update", value: (e) => e.data.lr },
  clip_low: {
    type: "DOUBLE",
    meaning: "the ratio's clip range is `[1 - clip_low, 1 + clip_high]`; NULL before v2",
    value: (e) => e.data.clipLow,
  },
  clip_high: { type: "DOUBLE", meaning: "see clip_low", value: (e) => e.data.clipHigh },
  temperature: {
    type: "DOUBLE",
    meaning: "the temperature the logprobs were taken at; NULL before v2",
    value: (e) => e.data.temperature,
  },
  lora_dropout: {
    type: "DOUBLE",
    meaning: "the LoRA dropout rate of the update (0 without); NULL before v2",
    value: (e) => e.data.loraDropout,
  },
  old_logprobs: {
    type: "VARCHAR",
    meaning: "`recompute` (recomputed before the first update) or `rollout` (the rollout's)",
    value: (e) => e.data.oldLogprobs,
  },
  old_logprob_drift: {
    type: "DOUBLE",
    meaning: "max |recomputed - rollout| old logprob over the group's tokens; NULL when not " +
      "recomputed",
    value: (e) => e.data.oldLogprobDrift,
  },
  tokens: { type: "BIGINT", meaning: "loss tokens of the update", value: (e) => e.data.tokens },
  skipped_non_finite: {
    type: "BOOLEAN",
    meaning: "the update was skipped: the gradient was not finite",
    value: (e) => e.data.skippedNonFinite,
  },
  parameter_hash: {
    type: "VARCHAR",
    meaning: "SHA-256 of the parameters after the update",
    value: (e) => e.data.parameterHash,
  },
  max_ratio: {
    type: "DOUBLE",
    meaning: "what shows an off-policy update: the largest ratio new / old policy over the " +
      "update's loss tokens; NULL where the run has no dual clip",
    value: (e) => e.data.maxRatio ?? null,
  },
  dual_clip_fraction: {
    type: "DOUBLE",
    meaning: "share of loss tokens whose loss the dual clip capped (a negative advantage at a " +
      "ratio past `loss.clip_ratio_c`); NULL without a dual clip",
    value: (e) => e.data.dualClipFraction ?? null,
  },
  kl_clamp_fraction: {
    type: "DOUBLE",
    meaning: "share of loss tokens whose k3 KL estimate `loss.kl_clamp` bounded; NULL without " +
      "a clamp or a KL term",
    value: (e) => e.data.klClampFraction ?? null,
  },
});

const gradStepRows = eventTable({
  name: "grad_step_rows",
  about: `The turns each update trained on: one row per rollout turn of an update's mini-batch
(\`gradient_step.applied.rows\`; none for logs from before v2). Each epoch's mini-batches partition
the worker group's turns of the step. Join \`grad_steps\` on \`(run_id, step, wg, update)\` and
\`turns\` on \`(run_id, step, prompt, sample, turn)\` with \`turns.phase = 'rollout'\`.`,
  events: ["gradient_step.applied"],
  rows: (e) => (e.data.rows ?? []).map((turn) => ({ e, turn })),
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (r) => r.e.stream },
  step: { type: "BIGINT", meaning: "the step", value: (r) => r.e.data.step },
  wg: { type: "VARCHAR", meaning: "the worker group", value: (r) => r.e.data.workerGroup },
  update: { type: "BIGINT", meaning: "the update (as grad_steps)", value: (r) => r.e.data.update },
  epoch: { type: "BIGINT", meaning: "its PPO epoch", value: (r) => r.e.data.epoch },
  mini_batch: { type: "BIGINT", meaning: "its mini-batch", value: (r) => r.e.data.miniBatch },
  prompt: { type: "BIGINT", meaning: "the turn's prompt group", value: (r) => r.turn.prompt },
  sample: { type: "BIGINT", meaning: "its sample", value: (r) => r.turn.sample },
  turn: { type: "BIGINT", meaning: "its turn", value: (r) => r.turn.turn },
});

const checkpoints = eventTable({
  name: "checkpoints",
  about: "One row per `checkpoint.saved`.",
  events: ["checkpoint.saved"],
  rows: (e) => [e],
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (e) => e.stream },
  step: { type: "BIGINT", meaning: "the step", value: (e) => e.data.step },
  wg: { type: "VARCHAR", meaning: "the worker group", value: (e) => e.data.workerGroup },
  blob: {
    type: "VARCHAR",
    meaning: "SHA-256 of the weights' blob",
    value: (e) => e.data.blob,
  },
  bytes: { type: "BIGINT", meaning: "size of the blob", value: (e) => e.data.bytes },
  parameter_hash: {
    type: "VARCHAR",
    meaning: "SHA-256 of the parameters",
    value: (e) => e.data.parameterHash,
  },
  optimizer_blob: {
    type: "VARCHAR",
    meaning: "SHA-256 of the optimizer state's blob, NULL when none",
    value: (e) => e.data.optimizerBlob,
  },
  format: {
    type: "VARCHAR",
    meaning: "layout of the blob, e.g. `safetensors`",
    value: (e) => e.data.format,
  },
});

const evals = eventTable({
  name: "evals",
  about: "One row per evaluated problem, from `evaluation.completed`.",
  events: ["evaluation.completed"],
  rows: (e) => e.data.problems.map((p) => ({ e, p })),
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (r) => r.e.stream },
  step: { type: "BIGINT", meaning: EVALUATED_STEP, value: (r) => r.e.data.step },
  benchmark: { type: "VARCHAR", meaning: "the benchmark", value: (r) => r.e.data.benchmark },
  problem_id: { type: "VARCHAR", meaning: "the problem", value: (r) => r.p.problemId },
  n: { type: "BIGINT", meaning: "samples", value: (r) => r.p.n },
  c: { type: "BIGINT", meaning: "correct samples", value: (r) => r.p.c },
  samples_per_problem: {
    type: "BIGINT",
    meaning: "samples asked per problem (k)",
    value: (r) => r.e.data.samplesPerProblem,
  },
});

const evalMetrics = eventTable({
  name: "eval_metrics",
  about: "The metrics the evaluator itself recorded, from `evaluation.completed`.",
  events: ["evaluation.completed"],
  rows: (e) => sortedEntries(e.data.metrics).map(([metric, value]) => ({ e, metric, value })),
}).columns({
  run_id: { type: "VARCHAR", meaning: RUN, value: (r) => r.e.stream },
  step: { type: "BIGINT", meaning: EVALUATED_STEP, value: (r) => r.e.data.step },
  benchmark: { type: "VARCHAR", meaning: "the benchmark", value: (r) => r.e.data.benchmark },
  metric: { type: "VARCHAR", meaning: "`avg@k`, `pass@k`, ...", value: (r) => r.metric },
  value: { type: "DOUBLE", meaning: "its value", value: (r) => r.value },
});

const logEvents = eventTable({
  name: "log_events",
  about: "Every event's place and time, of every stream: where a resumed run's attempts begin " +
    "and end.",
  events: runCatalogue.types as readonly EventType[],
  rows: (e) => [e],
}).columns({
  stream: {
    type: "VARCHAR",
    meaning: "the stream (a run's is its run id)",
    value: (e) => e.stream,
  },
  version: { type: "BIGINT", meaning: "1-based position in the stream", value: (e) => e.version },
  position: { type: "BIGINT", meaning: "global log position", value: (e) => e.position },
  recorded_at_ms: {
    type: "BIGINT",
    meaning: "wall clock at append, ms since the Unix epoch",
    value: (e) => e.recordedAt,
  },
});

const runAnnotations = eventTable({
  name: "run_annotations",
  about: "Tags and hiding, from the `annotations:runs` stream (`run.tagged`, `run.untagged`, " +
    "`run.hidden`, `run.unhidden`). Query the `run_tags` and `runs` views.",
  events: ["run.tagged", "run.untagged", "run.hidden", "run.unhidden"],
  rows: (e) => [e],
}).columns({
  run_id: { type: "VARCHAR", meaning: "the run annotated", value: (e) => e.data.runId },
  position: {
    type: "BIGINT",
    meaning: "global log position of the event",
    value: (e) => e.position,
  },
  recorded_at_ms: {
    type: "BIGINT",
    meaning: "wall clock at append, ms since the Unix epoch",
    value: (e) => e.recordedAt,
  },
  action: {
    type: "VARCHAR",
    meaning: "`tagged`, `untagged`, `hidden` or `unhidden`",
    value: (e) => e.type.slice("run.".length),
  },
  tag: {
    type: "VARCHAR",
    meaning: "the tag; NULL for hiding",
    value: (e) => "tag" in e.data ? e.data.tag : null,
  },
});

/** A writer lease as `run_leases` holds it: the lease, its process judged on this host. */
export interface JudgedLease {
  readonly lease: RunLease;
  /** whether its process exists, where it runs on this host and holds the lease; else null */
  readonly pidAlive: boolean | null;
}

const runLeases = sourceTable<JudgedLease>()({
  name: "run_leases",
  about: "Not from the log: the store's writer leases as copied at the last projection (every " +
    "catch-up replaces them), so that the `runs` view can tell a running run from an " +
    "interrupted one.",
}).columns({
  run_id: { type: "VARCHAR", meaning: "the run written", value: (l) => l.lease.runId },
  host: { type: "VARCHAR", meaning: "the writer's host", value: (l) => l.lease.host },
  pid: { type: "BIGINT", meaning: "the writer's process id", value: (l) => l.lease.pid },
  started_at_ms: {
    type: "BIGINT",
    meaning: "when the lease was taken, ms since the Unix epoch",
    value: (l) => l.lease.startedAt,
  },
  heartbeat_at_ms: {
    type: "BIGINT",
    meaning: "its last renewal",
    value: (l) => l.lease.heartbeatAt,
  },
  ended_at_ms: {
    type: "BIGINT",
    meaning: "when it was released; NULL while held",
    value: (l) => l.lease.endedAt,
  },
  pid_alive: {
    type: "BOOLEAN",
    meaning: "whether the writer's process still exists, judged where its host is this one " +
      "(NULL elsewhere, where only the heartbeat tells)",
    value: (l) => l.pidAlive,
  },
});

/** The tables projected from events, in creation order. */
export const EVENT_TABLES = Object.freeze(
  [
    runStarted,
    runBenchmarks,
    runConfig,
    agentRolesTable,
    runEnded,
    workerGroups,
    placements,
    steps,
    stepPrompts,
    turnEvents,
    trajectories,
    rewards,
    advantageGroups,
    baselines,
    advantageRows,
    gradSteps,
    gradStepRows,
    checkpoints,
    evals,
    evalMetrics,
    logEvents,
    runAnnotations,
  ] as const,
);

/** Every base table by name, in creation order. */
export const TABLES = Object.freeze(
  Object.fromEntries([...EVENT_TABLES, runLeases].map((t) => [t.name, t])),
) as { readonly [T in [...typeof EVENT_TABLES, typeof runLeases][number] as T["name"]]: T };

/** Name of a base table. */
export type TableName = keyof typeof TABLES;

/** A declared table, of any name and row source, projected from events or not. */
export type AnyTable = EventTableDeclaration<string, never> | TableDeclaration<string, never>;
