/**
 * The event sink replay hands to the training loop: each regenerated event is matched with the
 * logged event of the same id (ids derive from coordinates), compared by type, chain hash and
 * canonical bytes, and on a difference field by field. An exact replay runs on through the step
 * after its first divergence, to see whether the engine's state parted from the log (it then
 * differs ever after) or only one logged event disagrees (the log was edited). An event logged
 * at an older schema version is compared on that version's fields only (`asOfVersion`), and an
 * event of a type newer than the run's code (its `run.started` catalogue generation) is counted,
 * not compared: that code never wrote it. Nothing is written: blobs are only hashed.
 */
import {
  asOfVersion,
  type Catalogue,
  chainHash,
  type Coordinates,
  encodeCanonical,
  eventId,
  GENESIS_HASH,
  type NewEvent,
  runCatalogue,
  sha256Hex,
  type StoredEvent,
} from "../../events/mod.ts";
import type { EventSink } from "../trainer/run-log/mod.ts";
import { fieldDiff, type FieldDifference } from "./field-diff.ts";
import { type NumericDrift, numericDrift } from "./numeric-drift.ts";

/** A regenerated event that does not match the log. */
export interface Divergence {
  readonly kind: "divergence";
  /** `different`: both exist and differ; `not-logged` / `not-regenerated`: one side only */
  readonly reason: "different" | "not-logged" | "not-regenerated";
  readonly id: string;
  readonly type: string;
  readonly step: number | null;
  /** the logged event's stream version and global position, null when not logged */
  readonly version: number | null;
  readonly position: number | null;
  readonly coordinates: Coordinates;
  readonly recordedHash: string | null;
  readonly replayedHash: string | null;
  /** the logged bytes no longer hash to the logged hash: the log was altered after recording */
  readonly loggedDataAltered: boolean;
  /** regenerated after the log's last event: the log ends where the run goes on */
  readonly pastLogEnd: boolean;
  readonly fields: readonly FieldDifference[];
}

/**
 * Thrown through the training loop to end an exact replay after its first divergence, once the
 * step after it (`throughStep`) has been compared.
 */
export class ReplayStopped extends Error {
  override name = "ReplayStopped";
  constructor(readonly divergence: Divergence, readonly throughStep: number) {
    super(`replay diverged at ${divergence.type} ${divergence.id}`);
  }
}

/** How the comparer judges. */
export interface CompareOptions {
  readonly runId: string;
  readonly logged: readonly StoredEvent<NewEvent>[];
  /**
   * `exact`: stop after the step that follows the first difference; `tolerance`: run on and
   * measure numeric drift
   */
  readonly mode: "exact" | "tolerance";
  readonly rtol: number;
  readonly atol: number;
  /** The catalogue generation of the code that recorded the run (`run.started`; 1 if absent). */
  readonly generation: number;
  /** The event types this code writes; default runCatalogue (a test adds a type of its own). */
  readonly catalogue?: Catalogue;
}

/** What the comparer found. */
export interface Comparison {
  readonly compared: number;
  readonly identical: number;
  readonly firstDivergence: Divergence | null;
  readonly divergent: number;
  /** events on one side only (tokens or turn counts parted, or the log was cut) */
  readonly structural: number;
  readonly drift: NumericDrift | null;
  /**
   * Exact mode, after the first divergence: how many regenerated events that carry the engine's
   * state (turns, gradient steps, checkpoints) were compared, and how many of them differed.
   */
  readonly stateAfterDivergence: { readonly compared: number; readonly differed: number };
  /** Regenerated events of types the run's code did not have: not compared, by type. */
  readonly newerTypes: Readonly<Record<string, number>>;
}

/** Events that depend on the weights: they match only while the engine's state matches. */
const STATE_EVENTS: ReadonlySet<string> = new Set([
  "turn.generated",
  "gradient_step.applied",
  "checkpoint.saved",
]);

const stepOf = (data: unknown): number | null => {
  const s = (data as { step?: unknown }).step;
  return typeof s === "number" ? s : null;
};

/**
 * A comparing sink over a run's logged events.
 *
 * @example
 * ```ts
 * import type { Runtime } from "../../adapters/onnx/runtime/mod.ts";
 * import type { RunLog } from "../trainer/run-log/mod.ts";
 * import { runTraining } from "../trainer/train-loop.ts";
 * import { compareSink, ReplayStopped } from "./compare-sink.ts";
 *
 * declare const log: RunLog; // readRunLog(store, runId)
 * declare const runtime: Runtime;
 * const runId = log.runId;
 * const sink = compareSink({
 *   runId,
 *   logged: log.events,
 *   mode: "exact",
 *   rtol: 1e-3,
 *   atol: 1e-4,
 *   generation: log.started.data.catalogueGeneration ?? 1,
 * });
 * await runTraining(log.config, { sink, runtime, runId }).catch((e) => {
 *   if (!(e instanceof ReplayStopped)) throw e;
 * });
 * sink.finish({ from: 0, to: 3, end: true }).firstDivergence;
 * ```
 */
export function compareSink(options: CompareOptions) {
  const { runId, logged, mode, generation } = options;
  const catalogue = options.catalogue ?? runCatalogue;
  const byId = new Map(logged.map((e) => [e.id, e]));
  const lastLogged = logged.at(-1);
  const seen = new Set<string>();
  const drift = mode === "tolerance" ? numericDrift(options) : null;
  let compared = 0;
  let identical = 0;
  let divergent = 0;
  let structural = 0;
  let first: Divergence | null = null;
  let stopped = false;
  // The last step reached, and (exact mode) the last step compared after the first divergence.
  let stepNow = -1;
  let horizon = Number.POSITIVE_INFINITY;
  const after = { compared: 0, differed: 0 };
  const newerTypes: Record<string, number> = {};

  const diverge = (d: Divergence) => {
    divergent++;
    if (d.reason !== "different") structural++;
    if (first !== null && STATE_EVENTS.has(d.type)) after.differed++;
    if (first === null) {
      first = d;
      if (mode === "exact") horizon = (d.step ?? stepNow) + 1;
    }
  };

  const compareOne = (event: NewEvent) => {
    const def = catalogue.definition(event.type);
    if (def.since > generation) {
      newerTypes[event.type] = (newerTypes[event.type] ?? 0) + 1;
      return;
    }
    const data = catalogue.validate(event.type, event.data);
    const coordinates = def.coordinates(data as never);
    const id = eventId(runId, event.type, coordinates);
    const step = stepOf(data);
    if (first !== null && step !== null && step > horizon) {
      stopped = true;
      throw new ReplayStopped(first, horizon);
    }
    if (step !== null) stepNow = Math.max(stepNow, step);
    if (first !== null && STATE_EVENTS.has(event.type)) after.compared++;
    seen.add(id);
    compared++;
    const { json, tensors } = encodeCanonical(data);
    const log = byId.get(id);
    if (!log) {
      return diverge({
        kind: "divergence",
        reason: "not-logged",
        id,
        type: event.type,
        step,
        version: null,
        position: null,
        coordinates,
        recordedHash: null,
        replayedHash: null,
        loggedDataAltered: false,
        pastLogEnd: lastLogged !== undefined && seen.has(lastLogged.id),
        fields: [],
      });
    }
    const prev = log.version === 1 ? GENESIS_HASH : logged[log.version - 2].hash;
    const parts = { id, stream: runId, version: log.version, type: event.type };
    const replayedHash = chainHash(prev, {
      ...parts,
      schemaVersion: def.schemaVersion,
      data: json,
      tensors,
    });
    const recorded = encodeCanonical(log.data);
    const recordedRehash = chainHash(prev, {
      ...parts,
      schemaVersion: log.storedSchemaVersion,
      data: recorded.json,
      tensors: recorded.tensors,
    });
    const sameVersion = log.storedSchemaVersion === def.schemaVersion;
    // An event logged at an older version is judged on the fields that version had: the fields
    // added since are new information, not a difference (both sides are viewed alike).
    const [replayedView, recordedView] = sameVersion
      ? [data, log.data]
      : [data, log.data].map((d) => asOfVersion(def, d, log.storedSchemaVersion));
    const mine = sameVersion ? { json, tensors } : encodeCanonical(replayedView);
    const theirs = sameVersion ? recorded : encodeCanonical(recordedView);
    const sameBytes = theirs.json === mine.json &&
      sha256Hex(theirs.tensors) === sha256Hex(mine.tensors);
    const sameType = log.type === event.type;
    drift?.add(id, log, { type: event.type, data } as NewEvent);
    if (sameType && sameBytes && (!sameVersion || replayedHash === log.hash)) {
      identical++;
      return;
    }
    const typeDifference: FieldDifference[] = sameType
      ? []
      : [{ kind: "field-difference", path: "(type)", recorded: log.type, replayed: event.type }];
    diverge({
      kind: "divergence",
      reason: "different",
      id,
      type: event.type,
      step,
      version: log.version,
      position: log.position,
      coordinates,
      recordedHash: log.hash,
      replayedHash,
      loggedDataAltered: sameVersion && recordedRehash !== log.hash,
      pastLogEnd: false,
      fields: [...typeDifference, ...fieldDiff(recordedView, replayedView)],
    });
  };

  const sink: EventSink = {
    append: (events) => {
      // After an exact replay stopped, the loop's own failure report is not part of the run.
      if (stopped) return Promise.resolve();
      for (const event of events) {
        // run.started records when and where; replay reports those differences up front.
        if (event.type === "run.started") continue;
        compareOne(event);
      }
      return Promise.resolve();
    },
    putBlob: (bytes) => Promise.resolve(sha256Hex(bytes)),
  };

  return {
    ...sink,
    /**
     * Ends the comparison: logged events of the replayed range that were never regenerated are
     * divergences too. `end` says whether the replay ran to the run's last step.
     */
    finish(range: { from: number; to: number; end: boolean }): Comparison {
      if (!stopped) {
        for (const e of logged) {
          if (seen.has(e.id) || e.type === "run.started" || e.type === "run.failed") continue;
          const step = stepOf(e.data);
          const inRange = step === null
            ? range.end || e.type !== "run.completed"
            : step >= range.from && step <= range.to;
          if (!inRange) continue;
          divergent++;
          structural++;
          first ??= {
            kind: "divergence",
            reason: "not-regenerated",
            id: e.id,
            type: e.type,
            step,
            version: e.version,
            position: e.position,
            coordinates: catalogue.definition(e.type).coordinates(e.data as never),
            recordedHash: e.hash,
            replayedHash: null,
            loggedDataAltered: false,
            pastLogEnd: false,
            fields: [],
          };
        }
      }
      return {
        compared,
        identical,
        firstDivergence: first,
        divergent,
        structural,
        drift: drift?.report() ?? null,
        stateAfterDivergence: { ...after },
        newerTypes: { ...newerTypes },
      };
    },
  };
}
