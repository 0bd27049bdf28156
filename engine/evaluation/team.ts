/**
 * A trained team (`deno task eval RUN`): every worker group of a training run with its weights of
 * one checkpointed step (by default the last: the final weights of a completed run), under the
 * run's own workflow, agents, prompts, roles and agent-to-group map. Frozen groups keep the base
 * model they named. The evaluation config is the run's, with only what an evaluation sets
 * replaced (name, seed, benchmarks, samples, sampling overrides, runtime), so the team sees what
 * it saw in training.
 */
import { z } from "zod";
import type { EventStore } from "../../events/mod.ts";
import {
  ConfigError,
  experimentConfigSchema,
  MAX_SAMPLES,
  mergeConfig,
  type NormalizedConfig,
} from "../config/mod.ts";
import { readRunLog, RunLogError } from "../trainer/run-log/mod.ts";
import { EvaluationInputError } from "./errors.ts";
import { findRun, type ModelSource, runCheckpoints, runOfSpec } from "./model-source.ts";

/** One worker group of a team: its agents and the weights it plays with. */
export interface TeamMember {
  readonly workerGroup: string;
  readonly agents: readonly string[];
  /** The group's checkpoint, or, for a frozen group, its base model directory. */
  readonly source: ModelSource;
}

/** A training run's team at one checkpointed step. */
export interface TeamSource {
  readonly kind: "run-team";
  /** `RUN@STEP`: names the team in events and tables. */
  readonly label: string;
  /** The base model of the first group, what a one-model team is known by. */
  readonly model: string;
  readonly run: string;
  readonly step: number;
  /** The run's recorded config (hash-checked against its `run.started`). */
  readonly config: NormalizedConfig;
  /** One per worker group, in the config's order. */
  readonly members: readonly TeamMember[];
}

/**
 * Resolves `RUN`, `RUN@STEP`, `latest` or `latest@STEP` to the run's team; `field` names the
 * argument in errors. Refuses evaluation runs, altered configs and groups without a checkpoint.
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../events/mod.ts";
 * declare const store: EventStore; // the runs' event store
 * const team = await resolveTeam(store, "latest", "RUN");
 * team.members.map((m) => m.source.label); // ["smoke-...@1/solver", "smoke-...@1/verifier"]
 * ```
 */
export async function resolveTeam(
  store: EventStore,
  spec: string,
  field: string,
): Promise<TeamSource> {
  const found = await findRun(store, spec, field);
  if (found === null) {
    throw new EvaluationInputError(
      field,
      spec,
      `the store ${store.target} has no run ${runOfSpec(spec)} (give RUN, RUN@STEP or latest)`,
    );
  }
  let config: NormalizedConfig;
  try {
    config = (await readRunLog(store, found.run)).config;
  } catch (err) {
    if (err instanceof RunLogError) throw new EvaluationInputError(field, spec, err.message);
    throw err;
  }
  const saved = await runCheckpoints(store, found.run, found.step, field);
  const members = config.worker_groups.map((wg): TeamMember => {
    const checkpoint = saved.checkpoints.find((c) => c.workerGroup === wg.id);
    if (checkpoint) return { workerGroup: wg.id, agents: wg.agents, source: checkpoint };
    if (wg.trainable.kind !== "frozen") {
      throw new EvaluationInputError(
        field,
        `${found.run}@${saved.step}`,
        `worker group ${wg.id} trained but saved no checkpoint at step ${saved.step}`,
      );
    }
    return {
      workerGroup: wg.id,
      agents: wg.agents,
      source: { kind: "model-dir", label: wg.model, model: wg.model },
    };
  });
  return {
    kind: "run-team",
    label: `${found.run}@${saved.step}`,
    model: config.worker_groups[0].model,
    run: found.run,
    step: saved.step,
    config,
    members,
  };
}

/** What a team evaluation changes in the run's config. */
export interface TeamEvalSettings {
  readonly team: TeamSource;
  /** Benchmark files, or the run's own `evaluation.benchmarks` (its splits included) when null. */
  readonly benchmarks: readonly string[] | null;
  /** Samples per problem; null: the run's `evaluation.n_samples`. */
  readonly n: number | null;
  readonly seed: number;
  readonly sampling?: { temperature?: number; top_p?: number; max_tokens?: number };
  readonly device: string;
  readonly threads: number;
  readonly name?: string;
}

const samplingSchema = experimentConfigSchema.shape.sampling;

/**
 * The config of one seed's team evaluation: the run's config with the evaluation's settings.
 * Throws ConfigError for sampling overrides the schema refuses.
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../events/mod.ts";
 * declare const store: EventStore;
 * const team = await resolveTeam(store, "latest", "RUN");
 * const config = teamEvalConfig({ team, benchmarks: null, n: null, seed: team.config.seed,
 *   device: "cpu", threads: 1 });
 * config.workflow; // the run's
 * ```
 */
export function teamEvalConfig(settings: TeamEvalSettings): NormalizedConfig {
  const run = settings.team.config;
  const merged = mergeConfig(run.sampling, settings.sampling ?? {}) as Record<string, unknown>;
  const sampling = samplingSchema.safeParse(merged);
  if (!sampling.success) {
    throw new ConfigError(
      `eval ${settings.team.label}`,
      sampling.error.issues.map((issue) => ({
        key: ["sampling", ...issue.path.map(String)].join("."),
        value: merged[String(issue.path[0])],
        allowed: issue.message,
      })),
    );
  }
  const n = settings.n ?? run.evaluation.n_samples;
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_SAMPLES) {
    throw new RangeError(`samples per problem must be in 1..${MAX_SAMPLES}; got ${n}`);
  }
  return Object.freeze({
    ...run,
    name: settings.name ?? `eval ${settings.team.label} team`,
    seed: settings.seed,
    steps: 0,
    sampling: sampling.data as z.output<typeof samplingSchema>,
    evaluation: {
      benchmarks: [...(settings.benchmarks ?? run.evaluation.benchmarks)],
      n_samples: n,
      every_steps: 0,
    },
    runtime: {
      ...run.runtime,
      device: settings.device as NormalizedConfig["runtime"]["device"],
      threads: settings.threads,
    },
  });
}
