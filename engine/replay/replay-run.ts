/**
 * Replays a recorded run: re-executes it from its `run.started` config with the training loop
 * itself (through a comparing sink) and reports whether every event regenerates identically.
 * On the recorded backend any difference is a divergence; on another backend (e.g. wasm for a
 * cpu run) low bits differ by design, so it runs to the end and reports numeric drift instead.
 * The log's integrity is checked first: an altered log is reported as such (with its first bad
 * position), never blamed on the engine. Evaluation runs and runs without a logged step are
 * refused: there is nothing to re-execute. A run of 0 steps replays its evaluation of the initial
 * team, which carries step 0.
 */
import type { EventStore, NewEvent, StoredEvent } from "../../events/mod.ts";
import type { Runtime } from "../../adapters/onnx/runtime/mod.ts";
import { readRunLog, recordedEmbedded, resumeState } from "../trainer/run-log/mod.ts";
import { recordedTurns, type ReplayRollouts } from "../trainer/rollout/mod.ts";
import {
  codeVersion,
  type RuntimeDifference,
  runtimeDifferences,
  runtimeRecord,
} from "../trainer/runtime-record.ts";
import { runTraining, type TrainProgress } from "../trainer/train-loop.ts";
import { workflowModuleSource } from "../workflows/mod.ts";
import { compareSink, type Divergence, ReplayStopped } from "./compare-sink.ts";
import { type LogAlteration, replayAlteration, storeAlteration } from "./log-alteration.ts";
import { type ChangedModule, likelyCauses } from "./likely-cause.ts";
import type { NumericDrift } from "./numeric-drift.ts";

/**
 * The last step wholly in the log: every step of a completed run (step 0 of a completed run of 0
 * steps: its evaluation of the initial team); for a killed one the last step that was
 * checkpointed or followed by the next step's start.
 */
function lastLoggedStep(events: readonly StoredEvent<NewEvent>[], steps: number): number {
  if (events.some((e) => e.type === "run.completed")) return Math.max(steps - 1, 0);
  let last = -1;
  for (const e of events) {
    if (e.type === "step.started") last = Math.max(last, e.data.step - 1);
    if (e.type === "checkpoint.saved") last = Math.max(last, e.data.step);
  }
  return last;
}

/** The module's change since the recording, or null when it hashes as recorded (or is none). */
function moduleChange(
  recorded: { readonly sha256: string } | undefined,
  current: { readonly path: string; readonly sha256: string } | null,
): ChangedModule | null {
  if (current === null || recorded?.sha256 === current.sha256) return null;
  return { path: current.path, recorded: recorded?.sha256 ?? null, current: current.sha256 };
}

/** A step range outside the run. */
export class ReplayRangeError extends Error {
  override name = "ReplayRangeError";
}

/**
 * The run has nothing to re-execute: it was killed before its first step ended, or (a run of 0
 * steps) before its evaluation of the initial team did.
 */
export class NothingToReplayError extends Error {
  override name = "NothingToReplayError";
  constructor(readonly runId: string, reason: string) {
    super(`run ${runId} ${reason}: nothing to replay`);
  }
}

/** What to replay and how to judge it. */
export interface ReplayOptions {
  readonly runtime: Runtime;
  /** First step to compare (restored from the checkpoint at or before it); default 0. */
  readonly from?: number;
  /** Last step to compare; default the run's last. */
  readonly to?: number;
  /** Tolerances of a cross-backend replay: |a - b| <= atol + rtol * |a|. */
  readonly rtol?: number;
  readonly atol?: number;
  readonly onProgress?: (progress: TrainProgress) => void;
  /**
   * Where the replay's turns come from: `keyed` re-samples them in-process with the recorded
   * keyed draws and compares tokens (the default for runs on deno task serve servers or rollout
   * workers), `recorded`
   * takes the log's turns as given and re-executes rewards, advantages and updates (servers that
   * are not bit-reproducible: vLLM, SGLang). Default for local runs: sampled as recorded.
   */
  readonly rollouts?: ReplayRollouts;
}

/** The outcome of a replay. */
export interface ReplayReport {
  readonly kind: "replay-report";
  readonly runId: string;
  readonly mode: "exact" | "tolerance";
  /**
   * How the turns were produced: sampled (a local run, as recorded), keyed (a server run's turns
   * re-sampled in-process and compared), recorded (taken from the log as given)
   */
  readonly rollouts: "sampled" | ReplayRollouts;
  /** the run's rollout backend */
  readonly rolloutBackend: "local" | "openai";
  /** recorded and current execution providers */
  readonly backend: { readonly recorded: string; readonly current: string };
  readonly runtimeDifferences: readonly RuntimeDifference[];
  readonly code: { readonly recorded: string; readonly current: string };
  /** a custom workflow's module whose source differs from the recorded one; null otherwise */
  readonly changedModule: ChangedModule | null;
  /** the run's configured steps; with 0 it only evaluated its initial team, at step 0 */
  readonly steps: number;
  /** the step the loop started at (after the restored checkpoint), and the compared range */
  readonly startedAt: number;
  readonly checkpointStep: number | null;
  readonly from: number;
  readonly to: number;
  readonly compared: number;
  readonly identical: number;
  readonly divergent: number;
  /**
   * Regenerated events of types introduced after the run's code (its catalogue generation), by
   * type: not compared, as that code never wrote them
   */
  readonly newerTypes: Readonly<Record<string, number>>;
  /** every compared event matched the log */
  readonly identicalRun: boolean;
  /** the last step of the range through which every event matched (null: not even the first) */
  readonly identicalThrough: number | null;
  readonly firstDivergence: Divergence | null;
  /** the first sign that the log was changed after recording, null when none was found */
  readonly alteration: LogAlteration | null;
  readonly likelyCauses: readonly string[];
  readonly drift: NumericDrift | null;
  /** tolerance mode: no token, structural or out-of-tolerance difference */
  readonly withinTolerance: boolean | null;
  /** exit 0 when true: an unaltered log, identical or within tolerance on another backend */
  readonly ok: boolean;
}

/**
 * Replays `runId` from `store` on `options.runtime`; writes nothing to the store.
 *
 * @example
 * ```ts
 * import type { Runtime } from "../../adapters/onnx/runtime/mod.ts";
 * import type { EventStore } from "../../events/mod.ts";
 * import { replayRun } from "./replay-run.ts";
 *
 * declare const store: EventStore;
 * declare const runtime: Runtime; // the run's recorded execution provider
 * const report = await replayRun(store, "run-1", { runtime });
 * report.ok; // true: identical through the last step
 * ```
 */
export async function replayRun(
  store: EventStore,
  runId: string,
  options: ReplayOptions,
): Promise<ReplayReport> {
  const log = await readRunLog(store, runId);
  const { config } = log;
  const last = lastLoggedStep(log.events, config.steps);
  if (last < 0 && config.steps === 0) {
    throw new NothingToReplayError(
      runId,
      `has 0 steps and stopped before its evaluation of the initial team ended (deno task ` +
        `train --resume ${runId} runs it)`,
    );
  }
  if (last < 0) {
    throw new NothingToReplayError(
      runId,
      `has no step wholly in the log (it stopped during step 0; deno task train --resume ` +
        `${runId} continues it)`,
    );
  }
  const from = options.from ?? 0;
  const to = options.to ?? last;
  if (!(Number.isInteger(from) && Number.isInteger(to) && 0 <= from && from <= to && to <= last)) {
    throw new ReplayRangeError(
      config.steps === 0
        ? `--from ${from} --to ${to}: run ${runId} has 0 steps; its evaluation of the initial ` +
          `team carries step 0, so need from = to = 0`
        : `--from ${from} --to ${to}: run ${runId} has logged steps 0..${last} of ` +
          `${config.steps}; need 0 <= from <= to <= ${last}`,
    );
  }
  const stored = await storeAlteration(store, runId, log.events);
  const changedModule = moduleChange(
    log.started.data.workflowModule,
    await workflowModuleSource(config.workflow),
  );
  const recorded = log.started.data.runtime;
  const current = runtimeRecord(options.runtime.info);
  const mode = recorded.executionProvider === current.executionProvider ? "exact" : "tolerance";
  const resume = from > 0
    ? await resumeState(log.events, store.blobs, { before: from })
    : undefined;
  const sink = compareSink({
    runId,
    logged: log.events,
    mode,
    rtol: options.rtol ?? 1e-3,
    atol: options.atol ?? 1e-4,
    generation: log.started.data.catalogueGeneration ?? 1,
  });
  const rolloutBackend = config.rollout?.backend ?? "local";
  // Turns sampled outside this process (servers, or rollout workers in their own batches) carry
  // other batches' float rounding: re-sampled with their keyed draws and compared token for token.
  const elsewhere = rolloutBackend === "openai" || config.rollout?.dispatch === "workers";
  const rollouts = options.rollouts ?? (elsewhere ? "keyed" : "sampled");
  // An older run keeps the embedded weights it was trained on (or says which are missing).
  const embedded = await recordedEmbedded(log.events, runId);
  let end = to;
  try {
    await runTraining(config, {
      embedded,
      replayRollouts: rollouts === "sampled"
        ? undefined
        : { mode: rollouts, turns: recordedTurns(log.events) },
      sink,
      runtime: options.runtime,
      runId,
      resume,
      lastStep: to,
      onProgress: options.onProgress,
    });
  } catch (err) {
    if (!(err instanceof ReplayStopped)) throw err;
    end = Math.min(err.throughStep, to);
  }
  const startedAt = resume?.step ?? 0;
  // A run of 0 steps ends with its evaluation of the initial team, at step 0.
  const lastStep = Math.max(config.steps - 1, 0);
  const result = sink.finish({ from: startedAt, to: end, end: to === lastStep });
  const first = result.firstDivergence;
  const code = { recorded: log.started.data.codeVersion, current: await codeVersion() };
  const differences = runtimeDifferences(recorded, current);
  // Another code version (or workflow module) may rightly write an event differently; only the
  // same code and runtime make an isolated difference evidence of an edit.
  const sameExecution = code.recorded === code.current && differences.length === 0 &&
    changedModule === null;
  const alteration = stored ??
    (mode === "exact" ? replayAlteration(result, log.events, sameExecution) : null);
  const causes = first
    ? likelyCauses({
      runId,
      alteration,
      runtime: differences,
      recordedCode: code.recorded,
      currentCode: code.current,
      changedModule,
    })
    : [];
  const through = first === null ? to : first.step === null ? null : first.step - 1;
  const drift = result.drift;
  const withinTolerance = drift
    ? drift.firstTokenDivergence === null &&
      [drift.logprobs, drift.losses, drift.gradNorms].every((s) => s.outside === 0) &&
      result.structural === 0
    : null;
  return Object.freeze({
    kind: "replay-report",
    runId,
    mode,
    rollouts,
    rolloutBackend,
    backend: { recorded: recorded.executionProvider, current: current.executionProvider },
    runtimeDifferences: differences,
    code,
    changedModule,
    steps: config.steps,
    startedAt,
    checkpointStep: resume?.checkpointStep ?? null,
    from,
    to,
    compared: result.compared,
    identical: result.identical,
    divergent: result.divergent,
    newerTypes: result.newerTypes,
    identicalRun: first === null,
    identicalThrough: through !== null && through >= startedAt ? through : null,
    firstDivergence: first,
    alteration,
    likelyCauses: causes,
    drift,
    withinTolerance,
    ok: alteration === null && (first === null || withinTolerance === true),
  });
}
