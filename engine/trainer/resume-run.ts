/**
 * `deno task train --resume RUN`: continues a run that was killed. Parameters and AdamW state
 * come from the last checkpoint, the rest is re-derived from the log, and the regenerated events
 * are appended idempotently: those already logged are skipped, a differing one is a conflict.
 */
import { type EventStore, LEASE_TIMEOUT_MS, leaseIsLive } from "../../events/mod.ts";
import type { Runtime } from "../../adapters/onnx/runtime/mod.ts";
import {
  readRunLog,
  recordedEmbedded,
  resumeState,
  type RunLog,
  storeSink,
} from "./run-log/mod.ts";
import type { RolloutDispatch } from "./rollout/mod.ts";
import { NUMERIC_RUNTIME_FIELDS, runtimeDifferences, runtimeRecord } from "./runtime-record.ts";
import { runTraining, type TrainProgress, type TrainResult } from "./train-loop.ts";

/** The run cannot be resumed as asked. */
export class ResumeError extends Error {
  override name = "ResumeError";
}

/** What a resume did besides the training result. */
export interface ResumeResult extends TrainResult {
  /** The step whose checkpoint was restored; null when the run restarted from its initial weights. */
  readonly checkpointStep: number | null;
  /** The first step run again. */
  readonly fromStep: number;
}

/**
 * Continues `runId` in `store` on `runtime`, which must compute like the recorded one.
 *
 * @example
 * ```ts
 * import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
 * import type { EventStore } from "../../events/mod.ts";
 * import { resumeTraining } from "./resume-run.ts";
 * import { readRunLog } from "./run-log/mod.ts";
 *
 * declare const store: EventStore;
 * const { config } = await readRunLog(store, "run-1");
 * const runtime = await openRuntime(config.runtime.device, { threads: config.runtime.threads });
 * const result = await resumeTraining(store, "run-1", { runtime });
 * result.fromStep; // the step after the last checkpoint (0 when there is none)
 * ```
 */
export async function resumeTraining(
  store: EventStore,
  runId: string,
  options: {
    runtime: Runtime;
    onProgress?: (progress: TrainProgress) => void;
    signal?: AbortSignal;
    /** Plays the episodes of a run with rollout workers (TrainOptions.dispatch). */
    dispatch?: RolloutDispatch;
  },
): Promise<ResumeResult> {
  const log = await readRunLog(store, runId);
  if (log.events.some((e) => e.type === "run.completed")) {
    throw new ResumeError(`run ${runId} already completed; there is nothing to resume`);
  }
  const numeric = runtimeDifferences(log.started.data.runtime, runtimeRecord(options.runtime.info))
    .filter((d) => NUMERIC_RUNTIME_FIELDS.includes(d.field));
  if (numeric.length > 0) {
    throw new ResumeError(
      `run ${runId} was recorded on a runtime that computes differently: ` +
        numeric.map((d) => `${d.field} ${d.recorded} (now ${d.current})`).join(", ") +
        `; resume on the recorded one (its config's runtime.device and threads)`,
    );
  }
  await refuseLiveWriter(store, log);
  const state = await resumeState(log.events, store.blobs);
  const embedded = await recordedEmbedded(log.events, runId);
  const result = await runTraining(log.config, {
    embedded,
    sink: storeSink(store, runId, { fresh: false }),
    runtime: options.runtime,
    runId,
    resume: state,
    onProgress: options.onProgress,
    signal: options.signal,
    dispatch: options.dispatch,
  });
  return { ...result, checkpointStep: state.checkpointStep, fromStep: state.step };
}

/**
 * Refuses to resume a run whose writer lease is live: another process is still training it, and
 * two writers would interleave their steps. The log is left as it is: a resumed run's log is the
 * uninterrupted run's, event for event.
 */
async function refuseLiveWriter(store: EventStore, log: RunLog): Promise<void> {
  const lease = (await store.leases()).find((l) => l.runId === log.runId);
  if (lease && await leaseIsLive(lease)) {
    throw new ResumeError(
      `run ${log.runId} is still being written by process ${lease.pid} on ${lease.host} (its ` +
        `lease was renewed ${Math.round((Date.now() - lease.heartbeatAt) / 1000)} s ago); stop ` +
        `that process first, or resume once its lease has gone ${LEASE_TIMEOUT_MS / 1000} s ` +
        `without renewal`,
    );
  }
}
