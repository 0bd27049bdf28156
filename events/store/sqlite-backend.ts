/**
 * The embedded log: one SQLite file per project directory via `node:sqlite`, in WAL mode so
 * readers in other processes never block the writer. Appends run under `BEGIN IMMEDIATE`, which
 * serializes writers across processes, so positions are assigned and committed in order.
 * `synchronous=NORMAL`: a killed process loses nothing committed; a power cut may drop the last
 * commits but never tears one. Opened read-only, the file is only ever read.
 *
 * @example
 * ```ts
 * import { openSqliteBackend } from "./sqlite-backend.ts";
 *
 * const backend = await openSqliteBackend(".polyrl/events.sqlite", {
 *   create: true,
 *   readOnly: false,
 * });
 * ```
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import { dirname } from "node:path";
import { NotAnEventStoreError, StoreNotFoundError } from "../errors.ts";
import { filesystemBlobStore } from "../blob-store-fs.ts";
import type { Backend, EventRow, WriteTx } from "./backend.ts";
import type { RunLease, StreamHead } from "./event-store.ts";
import { LEASE_SELECT, leaseRow } from "./lease-row.ts";
import { readOnlyBackend } from "./read-only-backend.ts";
import { connectSqlite, createSqliteStore } from "./sqlite-connect.ts";
import { sqliteReadError } from "./sqlite-errors.ts";
import { inspectSqliteFile } from "./sqlite-file.ts";
import { immediateTransaction } from "./sqlite-transaction.ts";

type Row = Record<string, unknown>;

/** Ids per lookup statement (SQLite allows 32766 parameters). */
const LOOKUP_CHUNK = 500;

/** The columns of `events` in the order `eventRow` reads them. */
const EVENT_COLUMNS =
  "position, id, stream, version, type, schema_version, data, tensors, hash, recorded_at";

/** Maps a `node:sqlite` row of `events`, read as an array of EVENT_COLUMNS, to an EventRow. */
function eventRow(r: readonly unknown[]): EventRow {
  return {
    position: r[0] as number,
    id: r[1] as string,
    stream: r[2] as string,
    version: r[3] as number,
    type: r[4] as string,
    schemaVersion: r[5] as number,
    data: r[6] as string,
    tensors: r[7] as Uint8Array,
    hash: r[8] as string,
    recordedAt: r[9] as number,
  };
}

/**
 * Prepares a statement whose rows come back as arrays: `node:sqlite` builds row objects with
 * one property definition per column, and reading those back cost more than the query itself
 * (2.5 against 4 us per event on a full-log read). `setReturnArrays` is in Deno's runtime but not
 * yet in its `node:sqlite` types.
 */
function prepareArrays(db: DatabaseSync, text: string): ArrayStatement {
  const stmt = db.prepare(text) as StatementSync & { setReturnArrays(enabled: boolean): void };
  stmt.setReturnArrays(true);
  return stmt as unknown as ArrayStatement;
}

/** A prepared statement that returns its rows as arrays of column values. */
interface ArrayStatement {
  all(...params: SQLInputValue[]): unknown[][];
}

function headRow(r: Row | undefined): StreamHead | undefined {
  return r && {
    stream: r.stream as string,
    version: r.version as number,
    hash: r.hash as string,
    position: r.position as number,
  };
}

/** Where the filesystem blob store of an SQLite log lives: `x.sqlite` -> `x.blobs/`. */
export function blobDirFor(path: string): string {
  return `${path.replace(/\.sqlite3?$|\.db$/, "")}.blobs`;
}

/** Options of `openSqliteBackend`. */
export interface SqliteBackendOptions {
  /** make the file (and its folder) when it does not exist */
  readonly create: boolean;
  /** open for reading only: never create, migrate or write; appends are refused */
  readonly readOnly: boolean;
}

/**
 * Opens the SQLite log at `path`; throws StoreNotFoundError, NotAnEventStoreError,
 * StoreCorruptError, StoreVersionError or StoreOpenError, leaving anything that is not a store
 * untouched.
 */
export async function openSqliteBackend(
  path: string,
  options: SqliteBackendOptions,
): Promise<Backend> {
  const state = await inspectSqliteFile(path);
  if (state === "missing") {
    if (!options.create || options.readOnly) throw new StoreNotFoundError(path, "no such file");
    await Deno.mkdir(dirname(path), { recursive: true });
    await createSqliteStore(path);
  } else if (state === "empty") {
    // Someone's zero-byte file (a typo'd name, a placeholder) is not made into a store.
    throw new NotAnEventStoreError(path, "an empty file, no events table");
  }
  const { db, storeId } = await connectSqlite(path, options);
  const backend = new SqliteBackend(db, path, storeId);
  return options.readOnly ? readOnlyBackend(backend) : backend;
}

class SqliteBackend implements Backend {
  readonly kind = "sqlite" as const;
  readonly readOnly = false;
  readonly blobs;
  #db: DatabaseSync;
  #queue: Promise<unknown> = Promise.resolve();
  #s: Record<string, StatementSync>;
  #events: Record<"all" | "stream", ArrayStatement>;

  constructor(db: DatabaseSync, readonly target: string, readonly storeId: string | null) {
    this.#db = db;
    this.blobs = filesystemBlobStore(blobDirFor(target));
    const p = (text: string) => db.prepare(text);
    this.#s = {
      head: p("SELECT stream, version, hash, position FROM streams WHERE stream = ?"),
      heads: p("SELECT stream, version, hash, position FROM streams ORDER BY stream"),
      last: p("SELECT coalesce(max(position), 0) AS p FROM events"),
      insert: p(
        "INSERT INTO events (position, id, stream, version, type, schema_version, data, tensors, " +
          "hash, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      ),
      hasLeases: p("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_leases'"),
      setHead: p(
        "INSERT INTO streams (stream, version, hash, position) VALUES (?, ?, ?, ?) " +
          "ON CONFLICT (stream) DO UPDATE SET version = excluded.version, " +
          "hash = excluded.hash, position = excluded.position",
      ),
    };
    this.#events = {
      all: prepareArrays(
        db,
        `SELECT ${EVENT_COLUMNS} FROM events WHERE position >= ? ORDER BY position LIMIT ?`,
      ),
      stream: prepareArrays(
        db,
        `SELECT ${EVENT_COLUMNS} FROM events WHERE stream = ? AND version >= ? ORDER BY version ` +
          "LIMIT ?",
      ),
    };
  }

  #lookups = new Map<number, ArrayStatement>();

  // One statement per batch rather than one per event: a batch's id check costs one call.
  #byIds(count: number): ArrayStatement {
    let stmt = this.#lookups.get(count);
    if (!stmt) {
      stmt = prepareArrays(
        this.#db,
        `SELECT ${EVENT_COLUMNS} FROM events WHERE id IN (${Array(count).fill("?").join(", ")})`,
      );
      this.#lookups.set(count, stmt);
    }
    return stmt;
  }

  // One connection serves this process: reads wait for an open write transaction so that they
  // never see its uncommitted rows. A damaged file found while reading is named as such.
  #exclusive<T>(fn: () => Promise<T> | T): Promise<T> {
    const run = this.#queue.then(fn, fn).catch((err) => {
      throw sqliteReadError(this.target, err);
    });
    this.#queue = run.catch(() => {});
    return run;
  }

  #tx: WriteTx = {
    head: (stream) => Promise.resolve(headRow(this.#s.head.get(stream) as Row | undefined)),
    lastPosition: () => Promise.resolve((this.#s.last.get() as Row).p as number),
    existing: (ids) => {
      const rows: EventRow[] = [];
      for (let i = 0; i < ids.length; i += LOOKUP_CHUNK) {
        const chunk = ids.slice(i, i + LOOKUP_CHUNK);
        for (const r of this.#byIds(chunk.length).all(...chunk)) rows.push(eventRow(r));
      }
      return Promise.resolve(rows);
    },
    insert: (rows, head) => {
      const ins = this.#s.insert;
      for (const r of rows) {
        ins.run(
          r.position,
          r.id,
          r.stream,
          r.version,
          r.type,
          r.schemaVersion,
          r.data,
          r.tensors,
          r.hash,
          r.recordedAt,
        );
      }
      this.#s.setHead.run(head.stream, head.version, head.hash, head.position);
      return Promise.resolve();
    },
  };

  write<T>(fn: (tx: WriteTx) => Promise<T>): Promise<T> {
    return this.#exclusive(() => immediateTransaction(this.#db, this.target, () => fn(this.#tx)));
  }

  readAll(from: number, limit: number) {
    return this.#exclusive(() => this.#events.all.all(from, limit).map(eventRow));
  }

  readStream(stream: string, fromVersion: number, limit: number) {
    return this.#exclusive(() => this.#events.stream.all(stream, fromVersion, limit).map(eventRow));
  }

  head(stream: string) {
    return this.#exclusive(() => headRow(this.#s.head.get(stream) as Row | undefined));
  }

  heads() {
    return this.#exclusive(() => (this.#s.heads.all() as Row[]).map((r) => headRow(r)!));
  }

  lastPosition() {
    return this.#exclusive(() => (this.#s.last.get() as Row).p as number);
  }

  putLease(lease: RunLease) {
    return this.#exclusive(() =>
      immediateTransaction(this.#db, this.target, () => {
        this.#db.prepare(
          "INSERT INTO run_leases (run_id, host, pid, started_at, heartbeat_at, ended_at) " +
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET host = excluded.host, " +
            "pid = excluded.pid, started_at = excluded.started_at, " +
            "heartbeat_at = excluded.heartbeat_at, ended_at = excluded.ended_at",
        ).run(
          lease.runId,
          lease.host,
          lease.pid,
          lease.startedAt,
          lease.heartbeatAt,
          lease.endedAt,
        );
      })
    );
  }

  leases() {
    return this.#exclusive(() => {
      // A store opened read-only may predate the table: it then holds no leases.
      if (this.#s.hasLeases.get() === undefined) return [];
      return (this.#db.prepare(`${LEASE_SELECT} ORDER BY run_id`).all() as Row[]).map(leaseRow);
    });
  }

  close() {
    return this.#exclusive(() => this.#db.close());
  }
}
