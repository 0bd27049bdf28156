/**
 * Deterministic replay of recorded runs: `replayRun` re-executes a run through the training loop
 * with a comparing sink and reports the first divergence, its fields and its likely cause, an
 * altered log named as such.
 *
 * @example
 * ```ts
 * import type { Runtime } from "../../adapters/onnx/runtime/mod.ts";
 * import type { EventStore } from "../../events/mod.ts";
 * import { formatReplayReport, replayRun } from "./mod.ts";
 *
 * declare const store: EventStore;
 * declare const runtime: Runtime;
 * const report = await replayRun(store, "run-1", { runtime, from: 2 });
 * console.log(formatReplayReport(report).join("\n"));
 * ```
 *
 * @module
 */
export { compareSink, type Comparison, type Divergence, ReplayStopped } from "./compare-sink.ts";
export { fieldDiff, type FieldDifference } from "./field-diff.ts";
export {
  type CauseEvidence,
  type ChangedModule,
  changedModuleText,
  likelyCauses,
} from "./likely-cause.ts";
export {
  alterationText,
  type LogAlteration,
  replayAlteration,
  storeAlteration,
} from "./log-alteration.ts";
export {
  type DriftStats,
  type NumericDrift,
  numericDrift,
  type TokenDivergence,
} from "./numeric-drift.ts";
export {
  NothingToReplayError,
  type ReplayOptions,
  ReplayRangeError,
  type ReplayReport,
  replayRun,
} from "./replay-run.ts";
export { formatReplayReport } from "./format-report.ts";
