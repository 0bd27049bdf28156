/**
 * Evidence that a run's log was changed after it was recorded, with the first bad position:
 * what the store's own check (`verify` of the stream: hash chain, versions, recorded head,
 * blobs) finds, rows missing right after the stream's last event, and what only a replay can
 * show (a missing tail the head was rewritten over, an edit whose hashes were recomputed).
 * Replay reports these as "the log was altered", never as engine nondeterminism.
 */
import type { EventStore, NewEvent, ProblemKind, StoredEvent } from "../../events/mod.ts";
import type { Comparison } from "./compare-sink.ts";

/** One finding that the log is not what was recorded. */
export interface LogAlteration {
  readonly kind: "log-alteration";
  /**
   * A `verify` problem kind; `tail-missing`: the replay goes on where the stream ends;
   * `rehashed-edit`: one event differs while the engine's state kept matching the log.
   */
  readonly problem: ProblemKind | "tail-missing" | "rehashed-edit";
  /** global position of the first affected (possibly missing) event, null if unknown */
  readonly position: number | null;
  /** its stream version, null if unknown */
  readonly version: number | null;
  readonly reason: string;
}

/**
 * The first sign in the store that `runId`'s logged events were altered: `verify` of its stream,
 * then a hole in the global positions right after its last event (rows deleted there, which a
 * rewritten head would hide from `verify` of the stream). Null when the log is intact as far as
 * the store can tell.
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../events/mod.ts";
 * import { readRunLog } from "../trainer/run-log/mod.ts";
 * import { alterationText, storeAlteration } from "./log-alteration.ts";
 *
 * declare const store: EventStore;
 * const log = await readRunLog(store, "run-1");
 * const altered = await storeAlteration(store, "run-1", log.events);
 * if (altered) console.log(alterationText(altered, "run-1"));
 * ```
 */
export async function storeAlteration(
  store: EventStore,
  runId: string,
  events: readonly StoredEvent<NewEvent>[],
): Promise<LogAlteration | null> {
  const report = await store.verify({ stream: runId });
  const p = report.firstProblem;
  if (p) {
    return {
      kind: "log-alteration",
      problem: p.kind,
      position: p.position,
      version: p.version,
      reason: p.reason,
    };
  }
  const last = events.at(-1);
  if (!last) return null;
  for await (const next of store.readAll({ from: last.position + 1 })) {
    if (next.position === last.position + 1) return null;
    return {
      kind: "log-alteration",
      problem: "position-gap",
      position: last.position + 1,
      version: last.version + 1,
      reason: `${positions(last.position + 1, next.position - 1)} missing from the log, right ` +
        `after this run's last event (rows deleted: the run's tail was cut and its head ` +
        `rewritten)`,
    };
  }
  return null;
}

/**
 * What an exact replay itself shows of an altered log whose chain and head are consistent: the
 * run goes on where the stream ends (a cut tail), or one event differs while every later event
 * that depends on the weights still matches (an edit whose hashes were recomputed; a difference
 * of the engine would carry into the weights and everything after). The latter only counts when
 * code and runtime are the recorded ones.
 *
 * @example
 * ```ts
 * import type { RunLog } from "../trainer/run-log/mod.ts";
 * import { compareSink } from "./compare-sink.ts";
 * import { replayAlteration } from "./log-alteration.ts";
 *
 * declare const log: RunLog; // the recorded run, replayed through `sink`
 * declare const sink: ReturnType<typeof compareSink>;
 * // true: the replay ran the recorded code on the recorded runtime
 * const altered = replayAlteration(sink.finish({ from: 0, to: 3, end: true }), log.events, true);
 * ```
 */
export function replayAlteration(
  result: Comparison,
  events: readonly StoredEvent<NewEvent>[],
  sameExecution: boolean,
): LogAlteration | null {
  const d = result.firstDivergence;
  if (d === null) return null;
  const last = events[events.length - 1];
  if (d.reason === "not-logged" && d.pastLogEnd) {
    return {
      kind: "log-alteration",
      problem: "tail-missing",
      position: last.position + 1,
      version: last.version + 1,
      reason: `the stream ends at event #${last.version} but the replay goes on with ${d.type}; ` +
        `its tail was cut (or the run was killed at exactly that point)`,
    };
  }
  const state = result.stateAfterDivergence;
  if (sameExecution && state.compared > 0 && state.differed === 0) {
    return {
      kind: "log-alteration",
      problem: "rehashed-edit",
      position: d.position,
      version: d.version,
      reason: `${d.type} differs from the replay, yet the engine's state kept matching the log ` +
        `(the ${state.compared} events after it that depend on the weights regenerated ` +
        `identically): its logged data was changed and the hash chain recomputed`,
    };
  }
  return null;
}

const positions = (a: number, b: number) =>
  a === b ? `position ${a} is` : `positions ${a}..${b} are`;

/**
 * `the log was altered (<problem> at position P, event #V of RUN: <reason>)`.
 *
 * @example
 * ```ts
 * import { alterationText, type LogAlteration } from "./log-alteration.ts";
 *
 * declare const altered: LogAlteration; // a hash-mismatch at position 66, the stream's 3rd event
 * alterationText(altered, "run-1");
 * // "the log was altered (hash-mismatch at position 66, event #3 of run-1: stored hash ...)"
 * ```
 */
export function alterationText(a: LogAlteration, runId: string): string {
  const at = [
    a.position === null ? null : `at position ${a.position}`,
    a.version === null ? null : `event #${a.version} of ${runId}`,
  ].filter((s) => s !== null).join(", ");
  return `the log was altered (${a.problem}${at ? ` ${at}` : ""}: ${a.reason})`;
}
