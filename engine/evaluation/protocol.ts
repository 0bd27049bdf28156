/**
 * Evaluation protocols: one agent answering alone, or a workflow with the same model in every
 * role (a trained run's own team is engine/evaluation/team.ts) (MADA-RL evaluates community models as identical copies in every generator and critic
 * role). Prompts, workflow shape and sampling come from the paper presets, so an evaluated model
 * sees what trained runs see; a run's checkpoint keeps its own prompts and sampling.
 */
import {
  type ExperimentConfigInput,
  mergeConfig,
  type NormalizedConfig,
  parseConfig,
  presetInput,
} from "../config/mod.ts";
import type { ModelSource } from "./model-source.ts";
import type { TeamSource } from "./team.ts";

/** The protocols `deno task eval --workflow` offers. */
export const PROTOCOLS = ["single", "debate", "refine"] as const;

/** One of {@link PROTOCOLS}. */
export type Protocol = typeof PROTOCOLS[number];

/** The worker group every role of an evaluation runs on: one model, one set of weights. */
export const EVAL_WORKER_GROUP = "policy";

/** What an evaluation config is built from. */
export interface EvalSettings {
  readonly protocol: Protocol;
  readonly source: ModelSource;
  /** Benchmark files (JSONL, JSON, Parquet). */
  readonly benchmarks: readonly string[];
  /** Samples per problem. */
  readonly n: number;
  readonly seed: number;
  /** Overrides of the protocol's (or the run's) sampling. */
  readonly sampling?: { temperature?: number; top_p?: number; max_tokens?: number };
  readonly device: string;
  readonly threads: number;
  /** Config `name` (default `eval <model> <protocol>`), what `report --group-by name` shows. */
  readonly name?: string;
}

function protocolInput(protocol: Protocol): ExperimentConfigInput {
  if (protocol === "refine") return presetInput("refine-drmas");
  const debate = presetInput("debate-mada");
  if (protocol === "debate") return debate;
  // A debate of one generator and no critics: the generator's answer is the team's.
  const generator = debate.agents.find((a) => a.role === "generator")!;
  return {
    ...debate,
    workflow: { kind: "debate", generators: 1, critics: 0, rounds: 1 },
    agents: [{ ...generator, id: "generator" }],
  };
}

/**
 * The normalized config of an evaluation: the protocol's agents, all on the source's model in one
 * frozen worker group, the benchmarks as `evaluation.benchmarks` with `n_samples` = n.
 * Throws ConfigError for settings the schema refuses (e.g. a negative temperature).
 *
 * @example
 * ```ts
 * import type { ModelSource } from "./model-source.ts";
 * declare const source: ModelSource; // from resolveModelSource
 * const config = evalConfig({ protocol: "debate", source, benchmarks: ["aime.jsonl"], n: 16,
 *   seed: 0, device: "cpu", threads: 1 });
 * config.agent_to_wg; // { "generator-1": "policy", ..., "critic-3": "policy" }
 * ```
 */
export function evalConfig(settings: EvalSettings): NormalizedConfig {
  const { protocol, source } = settings;
  const input = protocolInput(protocol);
  const run = source.kind === "run-checkpoint" ? source.settings : null;
  const agents = input.agents.map((a) => ({
    ...a,
    prompt: run?.agents.find((r) => r.role === a.role)?.prompt ?? a.prompt,
    model: source.model,
    trainable: { kind: "frozen" as const },
  }));
  const sampling = mergeConfig(run?.sampling ?? input.sampling, settings.sampling ?? {});
  return parseConfig(
    {
      ...input,
      name: settings.name ?? `eval ${source.label} ${protocol}`,
      seed: settings.seed,
      // Every problem comes from the benchmarks; the schema wants a task source all the same.
      tasks: { kind: "math-files", train: settings.benchmarks[0] },
      agents,
      agent_to_wg: Object.fromEntries(agents.map((a) => [a.id, EVAL_WORKER_GROUP])),
      steps: 0,
      sampling,
      evaluation: { benchmarks: [...settings.benchmarks], n_samples: settings.n, every_steps: 0 },
      // A run's checkpoint is evaluated with the graphs the run built.
      runtime: { device: settings.device, threads: settings.threads, fused_ops: run?.fused ?? [] },
    },
    `eval --workflow ${protocol}`,
  );
}

/**
 * What the eval's `run.started` records beside the config: protocol (`team`: a training run's
 * own team, engine/evaluation/team.ts), model and seed set.
 */
export interface EvalRecord {
  readonly protocol: Protocol | "team";
  readonly source: ModelSource | TeamSource;
  /** Every seed of this evaluation, in run order (one run stream each). */
  readonly seeds: readonly number[];
  /** Run ids of the seeds, same order. */
  readonly runs: readonly string[];
}

/**
 * The `run.started` config of one seed's run: the keys that describe an evaluation (training-only
 * keys such as tasks, estimator and steps left out) plus an `eval` section naming the protocol,
 * the model (directory, or run, step, worker group and checkpoint blob) and the sibling seeds.
 * That section is what marks a run as an evaluation (`isEvaluationConfig`, engine/trainer/run-log).
 *
 * @example
 * ```ts
 * import type { ModelSource } from "./model-source.ts";
 * declare const source: ModelSource;
 * const config = evalConfig({ protocol: "single", source, benchmarks: ["aime.jsonl"], n: 16,
 *   seed: 0, device: "cpu", threads: 1 });
 * recordedEvalConfig(config, { protocol: "single", source, seeds: [0, 1], runs: ["e-seed0", "e-seed1"] });
 * ```
 */
export function recordedEvalConfig(
  config: NormalizedConfig,
  record: EvalRecord,
): Record<string, unknown> {
  const model = recordedModel(record.source);
  return {
    schema_version: config.schema_version,
    name: config.name,
    seed: config.seed,
    workflow: config.workflow,
    agents: config.agents,
    agent_to_wg: config.agent_to_wg,
    worker_groups: config.worker_groups,
    sampling: config.sampling,
    evaluation: config.evaluation,
    runtime: config.runtime,
    eval: {
      protocol: record.protocol,
      model,
      seeds: [...record.seeds],
      runs: [...record.runs],
    },
  };
}

/** The model part of the record: a checkpoint without its run settings, a team by its members. */
function recordedModel(source: ModelSource | TeamSource): Record<string, unknown> {
  if (source.kind === "model-dir") return { ...source };
  if (source.kind === "run-checkpoint") {
    const { settings: _settings, ...checkpoint } = source;
    return checkpoint;
  }
  const { config: _config, members, ...team } = source;
  return {
    ...team,
    members: members.map((m) => ({ ...m, source: recordedModel(m.source) })),
  };
}
