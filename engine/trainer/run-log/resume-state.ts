/**
 * The state a run continues from: the last complete checkpoint (parameters and AdamW state of
 * every trainable worker group) at or before a step, plus what the loop carries between steps
 * that only the log knows (the latest evaluation metrics). Everything else is re-derived.
 */
import type { BlobStore, NewEvent, StoredEvent } from "../../../events/mod.ts";

/** One worker group's saved state. */
export interface SavedCheckpoint {
  readonly blob: Uint8Array;
  readonly optimizer: Uint8Array;
  readonly parameterHash: string;
}

/** Where a resumed run (or a replay from a step) starts. */
export interface ResumeState {
  readonly kind: "resume-state";
  /** The first step to run. */
  readonly step: number;
  /** The step whose checkpoint is restored; null when starting from the initial weights. */
  readonly checkpointStep: number | null;
  readonly checkpoints: ReadonlyMap<string, SavedCheckpoint>;
  readonly lastEval: Readonly<Record<string, number>>;
}

/** A checkpoint lacks what a resume needs. */
export class ResumeStateError extends Error {
  override name = "ResumeStateError";
}

/**
 * The state at the start of step `before` (default: after the last checkpoint): restored from the
 * newest checkpoint of a step below `before` that covers every trainable worker group.
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../../events/mod.ts";
 * import { resumeState } from "./resume-state.ts";
 * import { readRunLog } from "./run-log.ts";
 *
 * declare const store: EventStore;
 * const log = await readRunLog(store, "run-1");
 * const state = await resumeState(log.events, store.blobs, { before: 3 });
 * state.step; // 3 when step 2 was checkpointed, else earlier
 * ```
 */
export async function resumeState(
  events: readonly StoredEvent<NewEvent>[],
  blobs: BlobStore,
  options: { before?: number } = {},
): Promise<ResumeState> {
  const before = options.before ?? Infinity;
  const trainable = new Set<string>();
  const byStep = new Map<number, Extract<NewEvent, { type: "checkpoint.saved" }>["data"][]>();
  for (const e of events) {
    if (e.type === "policy.initialized" && e.data.trainableParameterCount > 0) {
      trainable.add(e.data.workerGroup);
    } else if (e.type === "checkpoint.saved" && e.data.step < before) {
      byStep.set(e.data.step, [...byStep.get(e.data.step) ?? [], e.data]);
    }
  }
  const complete = [...byStep.entries()]
    .filter(([, saved]) => [...trainable].every((wg) => saved.some((c) => c.workerGroup === wg)))
    .sort((a, b) => b[0] - a[0]);
  if (trainable.size === 0 || complete.length === 0) {
    return Object.freeze({
      kind: "resume-state",
      step: 0,
      checkpointStep: null,
      checkpoints: new Map(),
      lastEval: {},
    });
  }
  const [at, saved] = complete[0];
  const checkpoints = new Map<string, SavedCheckpoint>();
  for (const c of saved) {
    if (c.optimizerBlob === null) {
      throw new ResumeStateError(
        `checkpoint.saved of worker group ${c.workerGroup} at step ${at} has no optimizerBlob ` +
          `(written before checkpoints kept AdamW state); this run cannot be resumed from it`,
      );
    }
    checkpoints.set(c.workerGroup, {
      blob: await blobs.get(c.blob),
      optimizer: await blobs.get(c.optimizerBlob),
      parameterHash: c.parameterHash,
    });
  }
  return Object.freeze({
    kind: "resume-state",
    step: at + 1,
    checkpointStep: at,
    checkpoints,
    lastEval: lastEvaluation(events, at),
  });
}

/** The metrics of the newest evaluation at or before `step`, keyed as the loop keys them. */
function lastEvaluation(
  events: readonly StoredEvent<NewEvent>[],
  step: number,
): Record<string, number> {
  let latest = -1;
  for (const e of events) {
    if (e.type === "evaluation.completed" && e.data.step <= step) {
      latest = Math.max(latest, e.data.step);
    }
  }
  const metrics: Record<string, number> = {};
  for (const e of events) {
    if (e.type !== "evaluation.completed" || e.data.step !== latest) continue;
    for (const [k, v] of Object.entries(e.data.metrics)) metrics[`${e.data.benchmark}/${k}`] = v;
  }
  return metrics;
}
