/**
 * The `EventStore` contract shared by the SQLite and Postgres stores.
 *
 * Positions are global, 1-based, strictly increasing and gap-free in commit order: a reader that
 * has seen position p has seen every position below p. Stream versions are 1-based per stream
 * (an empty stream is at version 0). Events come back upcast to their current schema version.
 *
 * @example
 * ```ts
 * import { openStore } from "./open-store.ts";
 *
 * declare const signal: AbortSignal; // ends the subscription when aborted
 * await using store = await openStore(".polyrl/events.sqlite");
 * const r = await store.append("run-1", [{ type: "step.started", data: { step: 0, groupSize: 2,
 *   prompts: [] } }], { expectedVersion: 0 });
 * for await (const e of store.readStream("run-1")) console.log(e.version, e.type);
 * for await (const e of store.subscribe({ from: r.position + 1, signal })) console.log(e.type);
 * ```
 */
import type { AnyEvent } from "../define-event.ts";
import type { EventType, NewEvent } from "../catalogue.ts";
import type { BlobStore } from "../blob-store.ts";
import type { VerifyReport } from "../verify.ts";

/** An event as read back: what was appended plus where and when it sits in the log. */
export type StoredEvent<N extends AnyEvent = AnyEvent> = N & {
  /** deterministic id from the event's coordinates (32 hex digits) */
  readonly id: string;
  /** the stream (a run's stream id is its run id) */
  readonly stream: string;
  /** 1-based position within the stream */
  readonly version: number;
  /** 1-based global position, gap-free in commit order */
  readonly position: number;
  /** schema version of `data` (always the current one: older versions are upcast on read) */
  readonly schemaVersion: number;
  /** schema version the event was written with */
  readonly storedSchemaVersion: number;
  /** `sha256(prev_hash || canonical_bytes)` of this event, hex */
  readonly hash: string;
  /** wall clock at append, ms since the Unix epoch (UTC); informational, not hashed */
  readonly recordedAt: number;
};

/**
 * A stored run event of type `T` (default: any run event, narrowed by checking `type`).
 *
 * @example
 * ```ts
 * import type { RecordedEvent } from "./event-store.ts";
 *
 * function logprobsOf(e: RecordedEvent<"turn.generated">): Float32Array {
 *   return e.data.logprobs;
 * }
 * ```
 */
export type RecordedEvent<T extends EventType = EventType> = StoredEvent<
  Extract<NewEvent, { type: T }>
>;

/** Options of `append`. */
export interface AppendOptions {
  /**
   * The stream version the caller last saw (0 for a new stream). Events already in the log
   * identically (same id, same content) are skipped and count towards it, so re-sending a
   * batch after a crash succeeds. Omit to append at whatever version the stream is.
   */
  readonly expectedVersion?: number;
}

/** Where one appended event landed. */
export interface AppendedEvent {
  readonly id: string;
  readonly version: number;
  readonly position: number;
  readonly hash: string;
}

/** The outcome of `append`. */
export interface AppendResult {
  readonly stream: string;
  /** stream version after the append */
  readonly version: number;
  /** global position of the stream's last event after the append (0 if none) */
  readonly position: number;
  /** the events written by this call, in order */
  readonly appended: readonly AppendedEvent[];
  /** ids of events skipped because identical copies were already in the log */
  readonly skipped: readonly string[];
}

/** The last event of a stream as the store records it. */
export interface StreamHead {
  readonly stream: string;
  readonly version: number;
  readonly hash: string;
  readonly position: number;
}

/** Options of `subscribe`. */
export interface SubscribeOptions {
  /** first global position to deliver (default 1: the whole log, then live events) */
  readonly from?: number;
  /** ends the subscription */
  readonly signal?: AbortSignal;
  /**
   * how often to look for events written by other processes, in ms (default 50); Postgres
   * also announces appends with NOTIFY, so its subscribers wake at once
   */
  readonly pollIntervalMs?: number;
  /** called once, with the last delivered position, when the backlog is exhausted */
  readonly onCaughtUp?: (position: number) => void;
}

/**
 * A writer's lease on a run: which process (host, pid) is appending to it, since when, and when
 * it last renewed the lease. Kept beside the log, not in it: leases are never hashed, verified
 * or replayed, so a run's stream is the same whether or not its writer held one.
 */
export interface RunLease {
  readonly runId: string;
  readonly host: string;
  readonly pid: number;
  /** ms since the Unix epoch (UTC) */
  readonly startedAt: number;
  readonly heartbeatAt: number;
  /** when the writer let go of it (its run ended, or it exited); null while held */
  readonly endedAt: number | null;
}

/** Which implementation backs a store. */
export type StoreKind = "sqlite" | "postgres";

/** An append-only, hash-chained event log. `N` is the union of events it accepts. */
export interface EventStore<N extends AnyEvent = AnyEvent> extends AsyncDisposable {
  readonly kind: StoreKind;
  /** the path or URL (password removed) the store was opened from */
  readonly target: string;
  /**
   * the random id written once when the store was made: a store replaced at the same path has
   * another (null for a store made before ids were recorded and not opened for writing since)
   */
  readonly storeId: string | null;
  /** whether the store was opened for reading only (appends throw StoreReadOnlyError) */
  readonly readOnly: boolean;
  /** content-addressed storage for large state (weights, optimizer moments) */
  readonly blobs: BlobStore;
  /**
   * Validates, encodes, chains and appends events to a stream atomically (all or none).
   * Throws EventValidationError, UnknownEventTypeError, WrongExpectedVersionError or
   * EventIdConflictError, leaving the log unchanged.
   */
  append(stream: string, events: readonly N[], options?: AppendOptions): Promise<AppendResult>;
  /** A stream's events from `fromVersion` (default 1), in version order. */
  readStream(stream: string, options?: { fromVersion?: number }): AsyncIterable<StoredEvent<N>>;
  /** All events from global position `from` (default 1) up to the current end, in order. */
  readAll(options?: { from?: number }): AsyncIterable<StoredEvent<N>>;
  /** Catch-up subscription: the backlog from `from`, then live events until aborted. */
  subscribe(options?: SubscribeOptions): AsyncIterable<StoredEvent<N>>;
  /** Current version of a stream (0 when it has no events). */
  streamVersion(stream: string): Promise<number>;
  /** The last global position (0 for an empty log). */
  lastPosition(): Promise<number>;
  /** The stored hash of the event at global `position`, or undefined when there is none. */
  eventHash(position: number): Promise<string | undefined>;
  /** Every stream's head. */
  streams(): Promise<readonly StreamHead[]>;
  /**
   * Records a writer's lease on a run, replacing the run's previous one (a renewal, a release,
   * or a new process taking over a resumed run). Throws StoreReadOnlyError on a read-only store.
   */
  putLease(lease: RunLease): Promise<void>;
  /**
   * Every run's last lease, by run id (none for a store made before leases existed that no
   * writer has opened since).
   */
  leases(): Promise<readonly RunLease[]>;
  /** Walks hash chains, positions and blob references; see `verifyLog`. */
  verify(options?: { stream?: string }): Promise<VerifyReport>;
  close(): Promise<void>;
}
