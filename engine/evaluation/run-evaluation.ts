/**
 * Runs an evaluation: for each seed, a run stream of its own (`run.started` describing the eval,
 * `policy.initialized`, eval-phase turns and trajectories, one `evaluation.completed` per
 * benchmark, `run.completed`), built by the training loop's own evaluation so an evaluated model
 * and a trained run's evaluations read the same in every table. One run per seed is what the
 * report aggregates over (mean ± SEM across runs of a group), as it does for trained runs.
 */
import {
  checkRunId,
  type EventStore,
  hashConfig,
  type NewEvent,
  runCatalogue,
} from "../../events/mod.ts";
import type { Runtime } from "../../adapters/onnx/runtime/mod.ts";
import { MAX_ROLLOUT_EPISODES, type NormalizedConfig } from "../config/mod.ts";
import { buildWorkflow, type Question } from "../workflows/mod.ts";
import { codeVersion, runtimeRecord } from "../trainer/runtime-record.ts";
import {
  benchmarkIdentities,
  benchmarkName,
  benchmarkQuestions,
} from "../trainer/benchmark-identity.ts";
import { evaluate } from "../trainer/evaluate.ts";
import {
  loadQuestions,
  type TaskSource,
  taskSource,
  workflowRollouts,
} from "../trainer/rollout/mod.ts";
import { EvaluationInputError } from "./errors.ts";
import { type EvalPolicy, openEvalPolicy, sharedBases } from "./eval-policy.ts";
import type { ModelSource } from "./model-source.ts";
import {
  EVAL_WORKER_GROUP,
  evalConfig,
  type EvalRecord,
  type EvalSettings,
  recordedEvalConfig,
} from "./protocol.ts";
import { teamEvalConfig, type TeamEvalSettings } from "./team.ts";
import { type BenchmarkSummary, summarizeSeeds } from "./seed-summary.ts";

/** How far an evaluation is: episodes done of this seed's total. */
export interface EvalProgress {
  readonly seed: number;
  readonly run: string;
  readonly done: number;
  readonly total: number;
}

/** Where and how any evaluation runs: its store, runtime, seeds and their run ids. */
interface EvaluationRuns {
  readonly store: EventStore;
  readonly runtime: Runtime;
  readonly seeds: readonly number[];
  /** One run id per seed. */
  readonly runIds: readonly string[];
  readonly onProgress?: (progress: EvalProgress) => void;
  /** Called once a seed's run stream exists (its `run.started` appended). */
  readonly onRunStarted?: (run: string, seed: number) => void;
}

/** An evaluation to run: the settings of its config, its seeds and their run ids. */
export interface EvaluationOptions extends Omit<EvalSettings, "seed">, EvaluationRuns {}

/** What a finished evaluation reports. */
export interface EvaluationResult {
  readonly runIds: readonly string[];
  /** The step its events carry: the checkpoint's step for a run's checkpoint, else 0. */
  readonly step: number;
  /** Per seed (same order as the seeds): `benchmark/avg@n` and `benchmark/pass@n`. */
  readonly perSeed: readonly Readonly<Record<string, number>>[];
  readonly benchmarks: readonly BenchmarkSummary[];
}

/**
 * Loads every benchmark once before any event is written, so a bad file fails the command, not a
 * half-recorded run; returns the questions by file (for every seed's evaluation) and problem
 * counts by benchmark name.
 */
async function loadBenchmarks(files: readonly string[]) {
  const counts = new Map<string, number>();
  const questions = new Map<string, readonly Question[]>();
  for (const file of files) {
    const name = benchmarkName(file);
    if (counts.has(name)) {
      throw new EvaluationInputError(
        "--data",
        file,
        `has the benchmark name ${name} of an earlier file; rename one (names come from file names)`,
      );
    }
    try {
      questions.set(file, await loadQuestions(file));
    } catch (err) {
      throw new EvaluationInputError("--data", file, (err as Error).message);
    }
    counts.set(name, questions.get(file)!.length);
  }
  return { counts, questions };
}

/**
 * Evaluates `options.source` under `options.protocol` on the benchmark files, once per seed.
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../events/mod.ts";
 * import type { Runtime } from "../../adapters/onnx/runtime/mod.ts";
 * import type { ModelSource } from "./model-source.ts";
 * declare const store: EventStore;
 * declare const runtime: Runtime;
 * declare const source: ModelSource; // from resolveModelSource
 * const result = await runEvaluation({ store, runtime, source, protocol: "single",
 *   benchmarks: ["math500.jsonl"], n: 16, seeds: [0, 1, 2], runIds: ["e-0", "e-1", "e-2"],
 *   device: "cpu", threads: 1 });
 * result.benchmarks[0].avg; // { mean, sem }
 * ```
 */
export async function runEvaluation(options: EvaluationOptions): Promise<EvaluationResult> {
  checkSeeds(options);
  const { counts, questions } = await loadBenchmarks(options.benchmarks);
  const configs = options.seeds.map((seed) => evalConfig({ ...options, seed }));
  const loaded = await openEvalPolicy(
    options.runtime,
    options.store,
    options.source,
    EVAL_WORKER_GROUP,
  );
  try {
    return await recordSeeds(options, {
      configs,
      tasks: { train: [], validation: [], test: [], benchmarks: questions },
      problems: counts,
      n: options.n,
      step: options.source.kind === "run-checkpoint" ? options.source.step : 0,
      policies: [{ id: EVAL_WORKER_GROUP, source: options.source, loaded }],
      record: { protocol: options.protocol, source: options.source },
    });
  } finally {
    await loaded.release();
  }
}

/** A team evaluation: its team, seeds and run ids, and what it changes in the run's config. */
export interface TeamEvaluationOptions extends Omit<TeamEvalSettings, "seed">, EvaluationRuns {}

/**
 * Evaluates a training run's team (every worker group with its checkpointed weights, the run's
 * workflow and roles) once per seed. With the run's seed, benchmarks and samples it re-samples
 * what the run's own evaluation at that step sampled.
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../events/mod.ts";
 * import type { Runtime } from "../../adapters/onnx/runtime/mod.ts";
 * import { resolveTeam } from "./team.ts";
 * declare const store: EventStore;
 * declare const runtime: Runtime;
 * const team = await resolveTeam(store, "latest", "RUN");
 * const result = await runTeamEvaluation({ store, runtime, team, benchmarks: null, n: null,
 *   seeds: [team.config.seed], runIds: ["team-eval"], device: "cpu", threads: 1 });
 * ```
 */
export async function runTeamEvaluation(
  options: TeamEvaluationOptions,
): Promise<EvaluationResult> {
  checkSeeds(options);
  const { team } = options;
  const configs = options.seeds.map((seed) => teamEvalConfig({ ...options, seed }));
  const first = configs[0];
  // The splits come from the run's own config (its seed draws them), the files from disk.
  const names = first.evaluation.benchmarks.map(benchmarkName);
  const dup = names.find((name, i) => names.indexOf(name) !== i);
  if (dup !== undefined) {
    throw new EvaluationInputError(
      "--data",
      dup,
      "names the benchmark of an earlier file; rename one (names come from file names)",
    );
  }
  let tasks: TaskSource;
  try {
    tasks = await taskSource({ ...team.config, evaluation: first.evaluation });
  } catch (err) {
    // The message names the file; what it belongs to is the user's --data or the run's config.
    throw options.benchmarks === null
      ? new EvaluationInputError("RUN", team.label, `the run's tasks: ${(err as Error).message}`)
      : new EvaluationInputError("--data", options.benchmarks.join(" "), (err as Error).message);
  }
  const problems = new Map<string, number>();
  for (const benchmark of first.evaluation.benchmarks) {
    const count = benchmarkQuestions(tasks, benchmark)!.length;
    // An empty split is not evaluated (as in training): it has no row to summarize.
    if (count > 0) problems.set(benchmarkName(benchmark), count);
  }
  if (problems.size === 0) {
    throw new EvaluationInputError(
      "--data",
      first.evaluation.benchmarks.join(" "),
      "holds no problems; name benchmark files with --data",
    );
  }
  const policies: { id: string; source: ModelSource; loaded: EvalPolicy }[] = [];
  const bases = sharedBases(options.runtime);
  try {
    for (const member of team.members) {
      policies.push({
        id: member.workerGroup,
        source: member.source,
        loaded: await openEvalPolicy(
          options.runtime,
          options.store,
          member.source,
          member.workerGroup,
          { field: "RUN", bases },
        ),
      });
    }
    return await recordSeeds(options, {
      configs,
      tasks,
      problems,
      n: first.evaluation.n_samples,
      step: team.step,
      policies,
      record: { protocol: "team", source: team },
    });
  } finally {
    for (const p of policies) await p.loaded.release();
    bases.release();
  }
}

function checkSeeds(options: { seeds: readonly number[]; runIds: readonly string[] }): void {
  if (options.seeds.length === 0 || options.seeds.length !== options.runIds.length) {
    throw new RangeError(
      `need one run id per seed; got ${options.seeds.length} seeds, ${options.runIds.length} ids`,
    );
  }
  for (const run of options.runIds) checkRunId(run);
}

/** What every evaluation records the same way, however its policies were chosen. */
interface EvaluationPlan {
  /** One config per seed, same order as the seeds. */
  readonly configs: readonly NormalizedConfig[];
  readonly tasks: TaskSource;
  /** Problems per benchmark name, in evaluation order. */
  readonly problems: ReadonlyMap<string, number>;
  readonly n: number;
  /** The step the events carry. */
  readonly step: number;
  /** The worker groups, by id, with the model each loaded. */
  readonly policies: readonly { id: string; source: ModelSource; loaded: EvalPolicy }[];
  readonly record: Omit<EvalRecord, "seeds" | "runs">;
}

/** Runs and records one run stream per seed: run.started, policies, eval episodes, results. */
async function recordSeeds(
  options: {
    store: EventStore;
    runtime: Runtime;
    runIds: readonly string[];
    seeds: readonly number[];
    onProgress?: (progress: EvalProgress) => void;
    onRunStarted?: (run: string, seed: number) => void;
  },
  plan: EvaluationPlan,
): Promise<EvaluationResult> {
  const { store, runIds, seeds } = options;
  const { configs, step } = plan;
  const episodes = [...plan.problems.values()].reduce((s, c) => s + c, 0) * plan.n;
  if (episodes > MAX_ROLLOUT_EPISODES) {
    throw new EvaluationInputError(
      "--n",
      String(plan.n),
      `${episodes} episodes (problems x n) are more than one evaluation holds at once ` +
        `(${MAX_ROLLOUT_EPISODES}); lower --n or split the benchmark files`,
    );
  }
  const workflow = await buildWorkflow(configs[0], plan.tasks.retriever);
  const groups = new Map(plan.policies.map((p) => [p.id, p.loaded.policy]));
  const perSeed: Record<string, number>[] = [];
  const version = await codeVersion();
  for (const [i, config] of configs.entries()) {
    const run = runIds[i];
    const recorded = recordedEvalConfig(config, { ...plan.record, seeds, runs: runIds });
    await store.append(run, [
      {
        type: "run.started",
        data: {
          config: recorded,
          configHash: hashConfig(recorded),
          seed: config.seed,
          codeVersion: version,
          runtime: runtimeRecord(options.runtime.info),
          benchmarks: benchmarkIdentities(config.evaluation.benchmarks, plan.tasks),
          catalogueGeneration: runCatalogue.generation,
        },
      },
      ...plan.policies.map(({ id, source, loaded }): NewEvent => ({
        type: "policy.initialized",
        data: {
          workerGroup: id,
          agents: config.agents.filter((a) => a.wg === id).map((a) => a.id),
          model: source.model,
          source: source.kind === "run-checkpoint" ? `run:${source.label}` : source.model,
          parameterCount: loaded.parameterCount,
          trainableParameterCount: loaded.trainedParameterCount,
          parameterHash: loaded.parameterHash,
          blob: source.kind === "run-checkpoint" ? source.blob : null,
        },
      })),
    ], { expectedVersion: 0 });
    options.onRunStarted?.(run, config.seed);
    let done = 0;
    const rollouts = workflowRollouts(config, workflow, groups, {
      onEpisode: () =>
        options.onProgress?.({ seed: config.seed, run, done: ++done, total: episodes }),
    });
    try {
      const { events, metrics } = await evaluate(config, plan.tasks, step, rollouts);
      const end: NewEvent = { type: "run.completed", data: { steps: 0, metrics } };
      await store.append(run, [...events, end]);
      perSeed.push(metrics);
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      await store.append(run, [{
        type: "run.failed",
        data: { step, stage: "evaluation", error: { name: e.name, message: e.message } },
      }]).catch(() => {});
      throw err;
    }
  }
  return { runIds, step, perSeed, benchmarks: summarizeSeeds(perSeed, plan.problems, plan.n) };
}
