/**
 * Where the training loop's events go. `deno task train` writes them to the store; replay hands
 * the same loop a sink that compares each event with the log instead, so there is one loop.
 */
import {
  type EventStore,
  leaseIsLive,
  type NewEvent,
  WrongExpectedVersionError,
} from "../../../events/mod.ts";

/**
 * A fresh run whose id another writer took first: two `deno task train` with one `--run-id` on one
 * store, or a run id already used there. The store holds the other writer's events untouched.
 */
export class RunIdTakenError extends Error {
  override name = "RunIdTakenError";
  constructor(readonly runId: string, readonly events: number, readonly writer: string | null) {
    super(
      `run ${runId} is already in this store (${events} events)` +
        (writer === null
          ? ", written by another process: this one recorded nothing. Pick another --run-id, " +
            `or continue that run with --resume ${runId} if it was interrupted`
          : `: ${writer} is writing it (another train with --run-id ${runId}); this one ` +
            "recorded nothing. Pick another --run-id, or wait for that run to end"),
    );
  }
}

/** Who holds `runId`'s live writer lease, for the message, or null when nobody does. */
async function liveWriter(store: EventStore, runId: string): Promise<string | null> {
  const lease = (await store.leases()).find((l) => l.runId === runId);
  return lease && await leaseIsLive(lease) ? `process ${lease.pid} on ${lease.host}` : null;
}

/** Receives a run's events in order, and its large state. */
export interface EventSink {
  /** Takes the next events of the run (one atomic batch). */
  append(events: readonly NewEvent[]): Promise<void>;
  /** Keeps `bytes` (weights, optimizer state) and returns their SHA-256 key. */
  putBlob(bytes: Uint8Array): Promise<string>;
  /**
   * The store the events land in, when they land in one: the loop holds the run's writer lease
   * there (replay's comparer writes nowhere and has none).
   */
  readonly store?: EventStore;
}

/**
 * A sink appending to `runId`'s stream. The first batch of a fresh run must open the stream
 * (expected version 0), and fails with RunIdTakenError when another writer did; a resumed run
 * appends without it, so events already logged identically are skipped and a different event
 * under a logged id fails with EventIdConflictError.
 *
 * @example
 * ```ts
 * import type { EventStore, NewEvent } from "../../../events/mod.ts";
 * import { storeSink } from "./event-sink.ts";
 *
 * declare const store: EventStore;
 * declare const data: Extract<NewEvent, { type: "run.started" }>["data"];
 * const sink = storeSink(store, "run-1", { fresh: true });
 * await sink.append([{ type: "run.started", data }]);
 * ```
 */
export function storeSink(
  store: EventStore,
  runId: string,
  options: { fresh: boolean },
): EventSink {
  let first = options.fresh;
  return Object.freeze({
    append: async (events: readonly NewEvent[]) => {
      try {
        await store.append(runId, events, first ? { expectedVersion: 0 } : {});
      } catch (err) {
        if (!(first && err instanceof WrongExpectedVersionError)) throw err;
        throw new RunIdTakenError(runId, err.actual, await liveWriter(store, runId));
      }
      first = false;
    },
    putBlob: (bytes: Uint8Array) => store.blobs.put(bytes),
    store,
  });
}
