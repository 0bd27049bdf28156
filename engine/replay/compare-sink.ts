/**
 * The event sink replay hands to the training loop: each regenerated event is matched with the
 * logged event of the same id (ids derive from coordinates), compared by chain hash and canonical
 * bytes, and on a difference field by field. Nothing is written: blobs are only hashed.
 */
import {
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
import type { EventSink } from "../trainer/event-sink.ts";
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
  /** the logged event's stream version, null when not logged */
  readonly version: number | null;
  readonly coordinates: Coordinates;
  readonly recordedHash: string | null;
  readonly replayedHash: string | null;
  /** the logged bytes no longer hash to the logged hash: the log was altered after recording */
  readonly loggedDataAltered: boolean;
  readonly fields: readonly FieldDifference[];
}

/** Thrown through the training loop to end an exact replay at its first divergence. */
export class ReplayStopped extends Error {
  override name = "ReplayStopped";
  constructor(readonly divergence: Divergence) {
    super(`replay diverged at ${divergence.type} ${divergence.id}`);
  }
}

/** How the comparer judges. */
export interface CompareOptions {
  readonly runId: string;
  readonly logged: readonly StoredEvent<NewEvent>[];
  /** `exact`: stop at the first difference; `tolerance`: run on and measure numeric drift */
  readonly mode: "exact" | "tolerance";
  readonly rtol: number;
  readonly atol: number;
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
}

const stepOf = (data: unknown): number | null => {
  const s = (data as { step?: unknown }).step;
  return typeof s === "number" ? s : null;
};

/**
 * A comparing sink over a run's logged events.
 *
 * @example
 * const sink = compareSink({ runId, logged: log.events, mode: "exact", rtol: 1e-3, atol: 1e-4 });
 * await runTraining(log.config, { sink, runtime, runId }).catch((e) => {
 *   if (!(e instanceof ReplayStopped)) throw e;
 * });
 * sink.finish({ from: 0, to: 3, end: true }).firstDivergence;
 */
export function compareSink(options: CompareOptions) {
  const { runId, logged, mode } = options;
  const byId = new Map(logged.map((e) => [e.id, e]));
  const seen = new Set<string>();
  const drift = mode === "tolerance" ? numericDrift(options) : null;
  let compared = 0;
  let identical = 0;
  let divergent = 0;
  let structural = 0;
  let first: Divergence | null = null;
  let stopped = false;

  const diverge = (d: Divergence) => {
    divergent++;
    if (d.reason !== "different") structural++;
    if (first === null) first = d;
    if (mode === "exact") {
      stopped = true;
      throw new ReplayStopped(d);
    }
  };

  const compareOne = (event: NewEvent) => {
    const def = runCatalogue.definition(event.type);
    const data = runCatalogue.validate(event.type, event.data);
    const coordinates = def.coordinates(data as never);
    const id = eventId(runId, event.type, coordinates);
    const step = stepOf(data);
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
        coordinates,
        recordedHash: null,
        replayedHash: null,
        loggedDataAltered: false,
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
    const sameBytes = recorded.json === json && sha256Hex(recorded.tensors) === sha256Hex(tensors);
    const sameVersion = log.storedSchemaVersion === def.schemaVersion;
    drift?.add(id, log, { type: event.type, data } as NewEvent);
    if (sameBytes && (!sameVersion || replayedHash === log.hash)) {
      identical++;
      return;
    }
    diverge({
      kind: "divergence",
      reason: "different",
      id,
      type: event.type,
      step,
      version: log.version,
      coordinates,
      recordedHash: log.hash,
      replayedHash,
      loggedDataAltered: sameVersion && recordedRehash !== log.hash,
      fields: fieldDiff(log.data, data),
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
            coordinates: runCatalogue.definition(e.type).coordinates(e.data as never),
            recordedHash: e.hash,
            replayedHash: null,
            loggedDataAltered: false,
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
      };
    },
  };
}
