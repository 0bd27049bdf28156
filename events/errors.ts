/**
 * Typed errors of the event log. Each carries the context a caller needs to act on it (the field,
 * the stream, the versions) and a message that names the fix.
 *
 * @example
 * ```ts
 * import type { NewEvent } from "./catalogue.ts";
 * import { WrongExpectedVersionError } from "./errors.ts";
 * import type { EventStore } from "./store/event-store.ts";
 *
 * declare const store: EventStore<NewEvent>;
 * declare const events: NewEvent[];
 * try {
 *   await store.append("run-1", events, { expectedVersion: 3 });
 * } catch (err) {
 *   if (err instanceof WrongExpectedVersionError) console.log(err.actual);
 * }
 * ```
 */

/** Base class of every error raised by `events/`. */
export class EventLogError extends Error {
  override name = "EventLogError";
}

/** An event's data does not match its schema; `field` is the dotted path of the first bad field. */
export class EventValidationError extends EventLogError {
  override name = "EventValidationError";
  constructor(
    readonly type: string,
    readonly field: string,
    readonly detail: string,
  ) {
    super(`invalid ${type} event: field ${field || "(root)"}: ${detail}`);
  }
}

/** An event type that the catalogue does not know. */
export class UnknownEventTypeError extends EventLogError {
  override name = "UnknownEventTypeError";
  constructor(readonly type: string, readonly known: readonly string[]) {
    super(`unknown event type ${JSON.stringify(type)}; known types: ${known.join(", ")}`);
  }
}

/** A stored event has a schema version with no path to the current one. */
export class SchemaVersionError extends EventLogError {
  override name = "SchemaVersionError";
  constructor(readonly type: string, readonly schemaVersion: number, readonly current: number) {
    super(
      schemaVersion > current
        ? `${type} v${schemaVersion} is newer than this code (v${current}); upgrade polyrl to read it`
        : `no upcaster registered for ${type} v${schemaVersion} -> v${schemaVersion + 1}`,
    );
  }
}

/** Optimistic concurrency failure: the stream is not at the version the caller expected. */
export class WrongExpectedVersionError extends EventLogError {
  override name = "WrongExpectedVersionError";
  constructor(readonly stream: string, readonly expected: number, readonly actual: number) {
    super(
      `stream ${stream} is at version ${actual}, expected ${expected}; ` +
        `re-read the stream and retry`,
    );
  }
}

/** An event id already holds different content: coordinates were reused for a different event. */
export class EventIdConflictError extends EventLogError {
  override name = "EventIdConflictError";
  constructor(
    readonly id: string,
    readonly stream: string,
    readonly existingPosition: number | null,
  ) {
    super(
      `event id ${id} in stream ${stream} already holds a different event` +
        (existingPosition === null ? " in the same batch" : ` at position ${existingPosition}`) +
        `; events with the same coordinates must be identical`,
    );
  }
}

/** A value cannot be canonically encoded (a Date, a bigint, a `$`-prefixed key, ...). */
export class CanonicalEncodingError extends EventLogError {
  override name = "CanonicalEncodingError";
  constructor(readonly path: string, readonly reason: string) {
    super(`cannot encode ${path || "(root)"}: ${reason}`);
  }
}

/**
 * The store could not be opened: not a database, an unreachable server, a missing file. The
 * subclasses below name the common causes; each message says what to do.
 */
export class StoreOpenError extends EventLogError {
  override name = "StoreOpenError";
  constructor(
    readonly target: string,
    readonly reason: string,
    options: { message?: string; cause?: unknown } = {},
  ) {
    super(options.message ?? `cannot open event store ${target}: ${reason}`, {
      cause: options.cause,
    });
  }
}

/** Nothing is at the path or schema given, and the caller did not ask to create a store. */
export class StoreNotFoundError extends StoreOpenError {
  override name = "StoreNotFoundError";
  constructor(target: string, reason: string) {
    super(target, reason, {
      message: `no event store at ${target} (${reason}); check --store, or create one with ` +
        "`deno task train`",
    });
  }
}

/** The file or schema exists but holds something else than an event log. */
export class NotAnEventStoreError extends StoreOpenError {
  override name = "NotAnEventStoreError";
  constructor(target: string, reason: string) {
    super(target, reason, {
      message: `${target} is not a polyrl event store (${reason}); point --store at a store ` +
        "that `deno task train` wrote",
    });
  }
}

/** The store's bytes are damaged: a truncated or corrupt file. */
export class StoreCorruptError extends StoreOpenError {
  override name = "StoreCorruptError";
  constructor(target: string, reason: string, options: { cause?: unknown } = {}) {
    super(target, reason, {
      message: `event store ${target} is damaged: ${reason}; restore it from a backup (and run ` +
        `\`deno task verify --store ${target}\` on the copy)`,
      cause: options.cause,
    });
  }
}

/** The store was written by a newer polyrl, whose schema this code does not know. */
export class StoreVersionError extends StoreOpenError {
  override name = "StoreVersionError";
  constructor(target: string, readonly stored: number, readonly current: number) {
    super(target, `schema version ${stored}`, {
      message: `event store ${target}: store schema version ${stored} is newer than this ` +
        `code's ${current}; upgrade polyrl`,
    });
  }
}

/**
 * A store argument that names no store: empty, or a URL of a scheme no backend speaks. Raised
 * before anything is opened or created.
 */
export class StoreTargetError extends EventLogError {
  override name = "StoreTargetError";
  constructor(readonly target: string, readonly reason: string) {
    super(
      `store ${JSON.stringify(target)}: ${reason}; give an SQLite file path or a postgres:// ` +
        "(postgresql://) URL",
    );
  }
}

/** A write was attempted through a store opened read-only. */
export class StoreReadOnlyError extends EventLogError {
  override name = "StoreReadOnlyError";
  constructor(readonly target: string, readonly operation: string) {
    super(
      `cannot ${operation}: event store ${target} was opened read-only; open it without ` +
        "readOnly to write",
    );
  }
}

/** A write failed in the database (disk full, I/O error); nothing of it was committed. */
export class StoreWriteError extends EventLogError {
  override name = "StoreWriteError";
  constructor(
    readonly target: string,
    readonly reason: string,
    /** the driver's error */
    override readonly cause: unknown,
    /** the error of the ROLLBACK that followed, when that failed too */
    readonly rollbackError?: unknown,
  ) {
    super(`cannot write to event store ${target}: ${reason}`, { cause });
  }
}

/** A blob is absent from the blob store. */
export class BlobNotFoundError extends EventLogError {
  override name = "BlobNotFoundError";
  constructor(readonly hash: string) {
    super(`blob ${hash} is not in the blob store`);
  }
}

/** A blob's bytes do not hash to its key: the stored copy is damaged. */
export class BlobIntegrityError extends EventLogError {
  override name = "BlobIntegrityError";
  constructor(readonly hash: string, readonly actual: string) {
    super(`blob ${hash} is damaged: its bytes hash to ${actual}`);
  }
}
