/**
 * A run's log, written and read back: the events a step's rollouts become, the sink they are sent
 * to (the store, or replay's comparer), the writer lease held beside the log, and what a resume or
 * a replay reads from it (the run's events and config, the embedded weights it trained on, the
 * state at its last checkpoint).
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../../events/mod.ts";
 * import { readRunLog, resumeState } from "./mod.ts";
 * declare const store: EventStore; // the store the run was recorded in
 * const log = await readRunLog(store, "smoke-20261202T1630-ab12cd");
 * const state = await resumeState(log.events, store.blobs);
 * ```
 */
export { type EventSink, storeSink } from "./event-sink.ts";
export { recordedEmbedded } from "./recorded-embedded.ts";
export { type ResumeState, resumeState } from "./resume-state.ts";
export { episodeEvents, rolloutEvents } from "./run-events.ts";
export { holdRunLease } from "./run-lease.ts";
export { latestRunId, readRunLog, type RunLog, RunLogError } from "./run-log.ts";
