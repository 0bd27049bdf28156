/**
 * Typed errors of the event log. Each carries the context a caller needs to act on it (the field,
 * the stream, the versions) and a message that names the fix.
 *
 * @example
 * ```ts
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

/** The store could not be opened: not a database, an unreachable server, a missing file. */
export class StoreOpenError extends EventLogError {
  override name = "StoreOpenError";
  constructor(readonly target: string, readonly reason: string) {
    super(`cannot open event store ${target}: ${reason}`);
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
