/**
 * Runs an evaluation: for each seed, a run stream of its own (`run.started` describing the eval,
 * `policy.initialized`, eval-phase turns and trajectories, one `evaluation.completed` per
 * benchmark, `run.completed`), built by the training loop's own evaluation so an evaluated model
 * and a trained run's evaluations read the same in every table. One run per seed is what the
 * report aggregates over (mean ± SEM across runs of a group), as it does for trained runs.
 */
import type { EventStore, NewEvent } from "../../events/mod.ts";
import { checkRunId, hashConfig } from "../../events/mod.ts";
import type { Runtime } from "../../adapters/onnx/runtime/mod.ts";
import { MAX_ROLLOUT_EPISODES } from "../config/mod.ts";
import type { Question } from "../workflows/mod.ts";
import { buildWorkflow } from "../workflows/mod.ts";
import { codeVersion, runtimeRecord } from "../trainer/runtime-record.ts";
import { benchmarkName, evaluate } from "../trainer/evaluate.ts";
import { workflowRollouts } from "../trainer/rollouts.ts";
import { loadQuestions } from "../trainer/task-source.ts";
import { EvaluationInputError } from "./errors.ts";
import { openEvalPolicy } from "./eval-policy.ts";
import {
  EVAL_WORKER_GROUP,
  evalConfig,
  type EvalSettings,
  recordedEvalConfig,
} from "./protocol.ts";
import { type BenchmarkSummary, summarizeSeeds } from "./seed-summary.ts";

/** How far an evaluation is: episodes done of this seed's total. */
export interface EvalProgress {
  readonly seed: number;
  readonly run: string;
  readonly done: number;
  readonly total: number;
}

/** An evaluation to run: the settings of its config, its seeds and their run ids. */
export interface EvaluationOptions extends Omit<EvalSettings, "seed"> {
  readonly store: EventStore;
  readonly runtime: Runtime;
  readonly seeds: readonly number[];
  /** One run id per seed. */
  readonly runIds: readonly string[];
  readonly onProgress?: (progress: EvalProgress) => void;
  /** Called once a seed's run stream exists (its `run.started` appended). */
  readonly onRunStarted?: (run: string, seed: number) => void;
}

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
 * const result = await runEvaluation({ store, runtime, source, protocol: "single",
 *   benchmarks: ["math500.jsonl"], n: 16, seeds: [0, 1, 2], runIds: ["e-0", "e-1", "e-2"],
 *   device: "cpu", threads: 1 });
 * result.benchmarks[0].avg; // { mean, sem }
 * ```
 */
export async function runEvaluation(options: EvaluationOptions): Promise<EvaluationResult> {
  const { store, runtime, seeds, runIds, source } = options;
  if (seeds.length === 0 || seeds.length !== runIds.length) {
    throw new RangeError(
      `need one run id per seed; got ${seeds.length} seeds, ${runIds.length} ids`,
    );
  }
  for (const run of runIds) checkRunId(run);
  const { counts: problems, questions: benchmarks } = await loadBenchmarks(options.benchmarks);
  const episodes = [...problems.values()].reduce((s, c) => s + c, 0) * options.n;
  if (episodes > MAX_ROLLOUT_EPISODES) {
    throw new EvaluationInputError(
      "--n",
      String(options.n),
      `${episodes} episodes (problems x n) are more than one evaluation holds at once ` +
        `(${MAX_ROLLOUT_EPISODES}); lower --n or split the benchmark files`,
    );
  }
  const configs = seeds.map((seed) => evalConfig({ ...options, seed }));
  const step = source.kind === "run-checkpoint" ? source.step : 0;
  const loaded = await openEvalPolicy(runtime, store, source, EVAL_WORKER_GROUP);
  try {
    const workflow = await buildWorkflow(configs[0]);
    const perSeed: Record<string, number>[] = [];
    const version = await codeVersion();
    for (const [i, config] of configs.entries()) {
      const run = runIds[i];
      const recorded = recordedEvalConfig(config, {
        protocol: options.protocol,
        source,
        seeds,
        runs: runIds,
      });
      await store.append(run, [{
        type: "run.started",
        data: {
          config: recorded,
          configHash: hashConfig(recorded),
          seed: config.seed,
          codeVersion: version,
          runtime: runtimeRecord(runtime.info),
        },
      }, {
        type: "policy.initialized",
        data: {
          workerGroup: EVAL_WORKER_GROUP,
          agents: config.agents.map((a) => a.id),
          model: source.model,
          source: source.kind === "run-checkpoint" ? `run:${source.label}` : source.model,
          parameterCount: loaded.parameterCount,
          trainableParameterCount: loaded.trainedParameterCount,
          parameterHash: loaded.parameterHash,
          blob: source.kind === "run-checkpoint" ? source.blob : null,
        },
      }], { expectedVersion: 0 });
      options.onRunStarted?.(run, config.seed);
      let done = 0;
      const rollouts = workflowRollouts(
        config,
        workflow,
        new Map([[EVAL_WORKER_GROUP, loaded.policy]]),
        () => options.onProgress?.({ seed: config.seed, run, done: ++done, total: episodes }),
      );
      try {
        const { events, metrics } = await evaluate(
          config,
          { train: [], validation: [], test: [], benchmarks },
          step,
          rollouts,
        );
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
    return {
      runIds,
      step,
      perSeed,
      benchmarks: summarizeSeeds(perSeed, problems, options.n),
    };
  } finally {
    await loaded.release();
  }
}
