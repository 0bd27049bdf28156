/**
 * What the shared log logic (validation, encoding, chaining, conflicts, reads, verification)
 * needs from a database. Each store implements this over its driver; everything above it is
 * written once.
 *
 * @example
 * ```ts
 * import type { Backend } from "./backend.ts";
 *
 * declare const backend: Backend;
 * const result = await backend.write(async (tx) => {
 *   const head = await tx.head("run-1");
 *   // ... check the expected version, then tx.insert(rows, newHead)
 *   return head?.version ?? 0;
 * });
 * ```
 */
import type { BlobStore } from "../blob-store.ts";
import type { RunLease, StoreKind, StreamHead } from "./event-store.ts";

/** An `events` row as the backends return it (numbers as JS numbers, bytes as Uint8Array). */
export interface EventRow {
  readonly position: number;
  readonly id: string;
  readonly stream: string;
  readonly version: number;
  readonly type: string;
  readonly schemaVersion: number;
  readonly data: string;
  readonly tensors: Uint8Array;
  readonly hash: string;
  readonly recordedAt: number;
}

/** Operations inside a write transaction that excludes every other writer of the log. */
export interface WriteTx {
  head(stream: string): Promise<StreamHead | undefined>;
  lastPosition(): Promise<number>;
  /** The stored rows among `ids`. */
  existing(ids: readonly string[]): Promise<EventRow[]>;
  /** Inserts rows (positions already assigned) and moves the stream head. */
  insert(rows: readonly EventRow[], head: StreamHead): Promise<void>;
}

/** A database holding the log's tables. */
export interface Backend {
  readonly kind: StoreKind;
  readonly target: string;
  /** the id written once when the store was made; null for a store older than that record */
  readonly storeId: string | null;
  /** whether writes are refused (the store was opened for reading) */
  readonly readOnly: boolean;
  readonly blobs: BlobStore;
  /** Runs `fn` in a serialized write transaction; commits on return, rolls back on throw. */
  write<T>(fn: (tx: WriteTx) => Promise<T>): Promise<T>;
  /** Up to `limit` rows with position >= `from`, in position order. */
  readAll(from: number, limit: number): Promise<EventRow[]>;
  /** Up to `limit` rows of `stream` with version >= `fromVersion`, in version order. */
  readStream(stream: string, fromVersion: number, limit: number): Promise<EventRow[]>;
  head(stream: string): Promise<StreamHead | undefined>;
  heads(): Promise<StreamHead[]>;
  lastPosition(): Promise<number>;
  /** Upserts a run's lease (outside any event transaction). */
  putLease(lease: RunLease): Promise<void>;
  /** Every lease, by run id; none when the store has no lease table yet. */
  leases(): Promise<RunLease[]>;
  /**
   * Calls `onAppend` when another connection may have appended (a hint: readers re-read).
   * Optional: without it subscribers rely on polling. Appends committed after `ready` resolves
   * are announced; `stop` unsubscribes.
   */
  watch?(onAppend: () => void): { ready: Promise<void>; stop(): void };
  close(): Promise<void>;
}
