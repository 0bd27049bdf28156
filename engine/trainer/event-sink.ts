/**
 * Where the training loop's events go. `deno task train` writes them to the store; replay hands
 * the same loop a sink that compares each event with the log instead, so there is one loop.
 */
import type { EventStore, NewEvent } from "../../events/mod.ts";

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
 * (expected version 0); a resumed run appends without it, so events already logged identically
 * are skipped and a different event under a logged id fails with EventIdConflictError.
 *
 * @example
 * const sink = storeSink(store, "run-1", { fresh: true });
 * await sink.append([{ type: "run.started", data }]);
 */
export function storeSink(
  store: EventStore,
  runId: string,
  options: { fresh: boolean },
): EventSink {
  let first = options.fresh;
  return Object.freeze({
    append: async (events: readonly NewEvent[]) => {
      await store.append(runId, events, first ? { expectedVersion: 0 } : {});
      first = false;
    },
    putBlob: (bytes: Uint8Array) => store.blobs.put(bytes),
    store,
  });
}
