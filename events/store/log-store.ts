/**
 * The one implementation of `EventStore` semantics, over either backend: validation, canonical
 * encoding, deterministic ids, idempotent and conflicting re-appends, optimistic concurrency,
 * hash chaining, upcasting reads and catch-up subscriptions.
 *
 * @example
 * ```ts
 * import { runCatalogue } from "../catalogue.ts";
 * import { LogStore } from "./log-store.ts";
 * import { openSqliteBackend } from "./sqlite-backend.ts";
 *
 * const path = ".polyrl/events.sqlite";
 * const backend = await openSqliteBackend(path, { create: true, readOnly: false });
 * const store = new LogStore(backend, runCatalogue);
 * ```
 */
import type { AnyEvent, Catalogue } from "../define-event.ts";
import { decodeCanonical, encodeCanonical } from "../canonical.ts";
import { chainHash, GENESIS_HASH } from "../hash-chain.ts";
import { eventId } from "../event-id.ts";
import {
  EventIdConflictError,
  EventValidationError,
  WrongExpectedVersionError,
} from "../errors.ts";
import { verifyLog, type VerifyReport } from "../verify.ts";
import type { Backend, EventRow } from "./backend.ts";
import type {
  AppendOptions,
  AppendResult,
  EventStore,
  RunLease,
  StoredEvent,
  StreamHead,
  SubscribeOptions,
} from "./event-store.ts";

/** Rows fetched per read round trip. */
const PAGE = 512;

const STREAM = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}$/;

/** An event ready to be written: validated, encoded, identified. */
interface Prepared {
  readonly id: string;
  readonly type: string;
  readonly schemaVersion: number;
  readonly data: string;
  readonly tensors: Uint8Array;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameContent(a: Prepared, b: Prepared | EventRow): boolean {
  return a.type === b.type && a.schemaVersion === b.schemaVersion && a.data === b.data &&
    sameBytes(a.tensors, b.tensors);
}

/** `EventStore` over a backend; see event-store.ts for the contract. */
export class LogStore<N extends AnyEvent> implements EventStore<N> {
  readonly kind;
  readonly target;
  readonly storeId;
  readonly readOnly;
  readonly blobs;
  #waiters = new Set<() => void>();
  #closed = false;

  constructor(readonly backend: Backend, readonly catalogue: Catalogue<N>) {
    this.kind = backend.kind;
    this.target = backend.target;
    this.storeId = backend.storeId;
    this.readOnly = backend.readOnly;
    this.blobs = backend.blobs;
  }

  #prepare(stream: string, event: N, index: number): Prepared {
    if (typeof event !== "object" || event === null || typeof event.type !== "string") {
      throw new EventValidationError("(unknown)", `events[${index}].type`, "expected a string");
    }
    const def = this.catalogue.definition(event.type);
    const data = this.catalogue.validate(event.type, event.data);
    const { json, tensors } = encodeCanonical(data);
    return {
      id: eventId(stream, event.type, def.coordinates(data)),
      type: event.type,
      schemaVersion: def.schemaVersion,
      data: json,
      tensors,
    };
  }

  async append(
    stream: string,
    events: readonly N[],
    options: AppendOptions = {},
  ): Promise<AppendResult> {
    if (typeof stream !== "string" || !STREAM.test(stream)) {
      throw new EventValidationError("(envelope)", "stream", `${stream} must match ${STREAM}`);
    }
    if (!Array.isArray(events)) {
      throw new EventValidationError("(envelope)", "events", "expected an array of events");
    }
    const expected = options.expectedVersion;
    if (expected !== undefined && !(Number.isInteger(expected) && expected >= 0)) {
      throw new EventValidationError("(envelope)", "expectedVersion", "expected an integer >= 0");
    }
    const unique = new Map<string, Prepared>();
    events.forEach((event, i) => {
      const p = this.#prepare(stream, event, i);
      const twin = unique.get(p.id);
      if (twin && !sameContent(twin, p)) throw new EventIdConflictError(p.id, stream, null);
      unique.set(p.id, p);
    });
    const batch = [...unique.values()];
    const result = await this.backend.write(async (tx) => {
      const stored = new Map((await tx.existing(batch.map((p) => p.id))).map((r) => [r.id, r]));
      const fresh: Prepared[] = [];
      const skipped: string[] = [];
      let skippedAfterExpected = 0;
      for (const p of batch) {
        const row = stored.get(p.id);
        if (!row) {
          fresh.push(p);
          continue;
        }
        if (row.stream !== stream || !sameContent(p, row)) {
          throw new EventIdConflictError(p.id, stream, row.position);
        }
        skipped.push(p.id);
        if (expected !== undefined && row.version > expected) skippedAfterExpected++;
      }
      const head: StreamHead = (await tx.head(stream)) ??
        { stream, version: 0, hash: GENESIS_HASH, position: 0 };
      if (expected !== undefined && head.version !== expected + skippedAfterExpected) {
        throw new WrongExpectedVersionError(stream, expected, head.version);
      }
      if (fresh.length === 0) {
        return { stream, version: head.version, position: head.position, appended: [], skipped };
      }
      let { version, hash } = head;
      let position = await tx.lastPosition();
      const recordedAt = Date.now();
      const rows: EventRow[] = fresh.map((p) => {
        version++;
        position++;
        hash = chainHash(hash, { ...p, stream, version });
        return { ...p, stream, version, position, hash, recordedAt };
      });
      await tx.insert(rows, { stream, version, hash, position });
      return {
        stream,
        version,
        position,
        appended: rows.map(({ id, version, position, hash }) => ({ id, version, position, hash })),
        skipped,
      };
    });
    if (result.appended.length > 0) { for (const wake of this.#waiters) wake(); }
    return result;
  }

  /** Decodes and upcasts a stored row. */
  decode(row: EventRow): StoredEvent<N> {
    const current = this.catalogue.definition(row.type).schemaVersion;
    let data = decodeCanonical(row.data, row.tensors);
    if (row.schemaVersion !== current) {
      data = this.catalogue.upcast(row.type, row.schemaVersion, data);
    }
    return Object.freeze({
      type: row.type,
      data,
      id: row.id,
      stream: row.stream,
      version: row.version,
      position: row.position,
      schemaVersion: current,
      storedSchemaVersion: row.schemaVersion,
      hash: row.hash,
      recordedAt: row.recordedAt,
    }) as unknown as StoredEvent<N>;
  }

  async *readStream(
    stream: string,
    { fromVersion = 1 }: { fromVersion?: number } = {},
  ): AsyncIterable<StoredEvent<N>> {
    const end = (await this.backend.head(stream))?.version ?? 0;
    for (let v = fromVersion; v <= end;) {
      const rows = await this.backend.readStream(stream, v, PAGE);
      if (rows.length === 0) return;
      for (const row of rows) {
        if (row.version > end) return;
        yield this.decode(row);
      }
      v = rows[rows.length - 1].version + 1;
    }
  }

  async *readAll({ from = 1 }: { from?: number } = {}): AsyncIterable<StoredEvent<N>> {
    const end = await this.backend.lastPosition();
    for (let p = from; p <= end;) {
      const rows = await this.backend.readAll(p, PAGE);
      if (rows.length === 0) return;
      for (const row of rows) {
        if (row.position > end) return;
        yield this.decode(row);
      }
      p = rows[rows.length - 1].position + 1;
    }
  }

  async *subscribe(options: SubscribeOptions = {}): AsyncIterable<StoredEvent<N>> {
    const { signal, pollIntervalMs = 50, onCaughtUp } = options;
    let next = options.from ?? 1;
    let caughtUp = false;
    const wakeAll = () => this.#waiters.forEach((wake) => wake());
    const watch = this.backend.watch?.(wakeAll);
    try {
      await watch?.ready;
      while (!signal?.aborted && !this.#closed) {
        const rows = await this.backend.readAll(next, PAGE);
        for (const row of rows) {
          if (signal?.aborted) return;
          yield this.decode(row);
          next = row.position + 1;
        }
        if (rows.length < PAGE) {
          if (!caughtUp) {
            caughtUp = true;
            onCaughtUp?.(next - 1);
          }
          await this.#nextAppend(pollIntervalMs, signal);
        }
      }
    } finally {
      watch?.stop();
    }
  }

  // Resolves on an append through this store or announced by the backend, after `ms` (appends
  // that nothing announced), or on abort, whichever comes first.
  #nextAppend(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#waiters.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  async streamVersion(stream: string): Promise<number> {
    return (await this.backend.head(stream))?.version ?? 0;
  }

  lastPosition(): Promise<number> {
    return this.backend.lastPosition();
  }

  async eventHash(position: number): Promise<string | undefined> {
    if (!(Number.isInteger(position) && position >= 1)) return undefined;
    const [row] = await this.backend.readAll(position, 1);
    return row?.position === position ? row.hash : undefined;
  }

  streams(): Promise<readonly StreamHead[]> {
    return this.backend.heads();
  }

  putLease(lease: RunLease): Promise<void> {
    return this.backend.putLease(lease);
  }

  leases(): Promise<readonly RunLease[]> {
    return this.backend.leases();
  }

  verify(options: { stream?: string } = {}): Promise<VerifyReport> {
    return verifyLog(this.backend, this.catalogue, options);
  }

  /** Closes the store; subscriptions end at their next wait. */
  close(): Promise<void> {
    this.#closed = true;
    for (const wake of this.#waiters) wake();
    return this.backend.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
