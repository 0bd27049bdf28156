/**
 * The log on a Postgres server, for runs whose workers sit on several machines, via Kysely's
 * Postgres dialect and `pg`. Tables live in one schema (default `polyrl`; pick another with
 * `?schema=NAME` in the URL). Every append takes a transaction-scoped advisory lock before it
 * reads the last position, so positions are assigned and committed in the same order: a reader
 * can never see position p+1 while p is still uncommitted, which a sequence would allow. Opened
 * read-only, nothing is created or migrated, so a role with USAGE on the schema and SELECT on its
 * tables can read a store.
 *
 * @example
 * ```ts
 * import { openPostgresBackend } from "./postgres-backend.ts";
 *
 * const backend = await openPostgresBackend(
 *   "postgres://postgres@127.0.0.1:5432/postgres?schema=lab",
 *   { create: true, readOnly: false },
 * );
 * ```
 */
import pg from "pg";
import { Kysely, sql } from "kysely";
import { Migrator } from "kysely/migration";
import { NotAnEventStoreError, StoreNotFoundError, StoreOpenError } from "../errors.ts";
import { tableBlobStore } from "../blob-store-table.ts";
import { sha256Hex } from "../hash-chain.ts";
import type { Backend, EventRow, WriteTx } from "./backend.ts";
import type { RunLease, StreamHead } from "./event-store.ts";
import { LEASE_SELECT, leaseRow } from "./lease-row.ts";
import { postgresOpenError, redactUrl } from "./postgres-open-error.ts";
import { SchemaScopedPostgresDialect } from "./postgres-schema-dialect.ts";
import { readOnlyBackend } from "./read-only-backend.ts";
import { recognizeStore, type StoreInventory } from "./recognize-store.ts";
import { type EventsTable, type LogDatabase, logMigrationNames, logMigrations } from "./schema.ts";

// pg returns int8 as a string: safe to turn into a number below 2^53.
type PgRow = { [K in keyof EventsTable]: EventsTable[K] | string };

function eventRow(r: PgRow): EventRow {
  return {
    position: Number(r.position),
    id: r.id as string,
    stream: r.stream as string,
    version: Number(r.version),
    type: r.type as string,
    schemaVersion: Number(r.schema_version),
    data: r.data as string,
    tensors: new Uint8Array(r.tensors as Uint8Array),
    hash: r.hash as string,
    recordedAt: Number(r.recorded_at),
  };
}

function headRow(r: { [K in keyof StreamHead]: unknown }): StreamHead {
  return {
    stream: r.stream as string,
    version: Number(r.version),
    hash: r.hash as string,
    position: Number(r.position),
  };
}

/** Rows per INSERT or id lookup: Postgres allows 65535 parameters, an event row binds 10. */
const INSERT_CHUNK = 1000;

/** Options of `openPostgresBackend`. */
export interface PostgresBackendOptions {
  /** make the schema when it does not exist */
  readonly create: boolean;
  /** open for reading only: never create, migrate or write (a SELECT-only role suffices) */
  readonly readOnly: boolean;
}

/**
 * What the schema holds (undefined: no such schema). Its tables come from the system catalogue,
 * which every role may read; its migration record needs SELECT on `kysely_migration`.
 */
async function inventory(pool: pg.Pool, schema: string): Promise<StoreInventory | undefined> {
  const found = await pool.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
  if (found.rowCount === 0) return undefined;
  const tables = (await pool.query(
    "SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace " +
      "WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') ORDER BY 1",
    [schema],
  )).rows.map((r: { name: string }) => r.name);
  const migrations = tables.includes("kysely_migration")
    ? (await pool.query(`SELECT name FROM ${schema}.kysely_migration ORDER BY name`)).rows
      .map((r: { name: string }) => r.name)
    : [];
  return { tables, migrations };
}

async function createSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`).catch((err: { code?: string }) => {
    // Two processes creating the schema at once: one loses the race, the schema exists.
    if (err?.code !== "23505") throw err;
  });
}

async function storeIdOf(pool: pg.Pool, schema: string): Promise<string | null> {
  const found = await inventory(pool, schema);
  if (!found?.tables.includes("store_meta")) return null;
  const { rows } = await pool.query(
    `SELECT value FROM ${schema}.store_meta WHERE key = 'store_id'`,
  );
  return rows[0]?.value ?? null;
}

/**
 * Connects to Postgres and recognizes the schema as an event store; for writing, creates and
 * migrates it as needed. Throws StoreNotFoundError, NotAnEventStoreError, StoreVersionError or
 * StoreOpenError (naming refused connections, failed authentication, a missing database,
 * missing rights), leaving a schema that is not a store untouched.
 */
export async function openPostgresBackend(
  url: string,
  options: PostgresBackendOptions,
): Promise<Backend> {
  const target = redactUrl(url);
  const parsed = new URL(url);
  const schema = parsed.searchParams.get("schema") ?? "polyrl";
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new StoreOpenError(target, `schema ${schema} must match [a-z_][a-z0-9_]*`);
  }
  parsed.searchParams.delete("schema");
  const pool = new pg.Pool({
    connectionString: parsed.toString(),
    max: 4,
    connectionTimeoutMillis: 5000,
    options: `-c search_path=${schema}`,
  });
  // Its migrator looks for its tables in this schema alone (see postgres-schema-dialect.ts).
  const db = new Kysely<LogDatabase>({
    dialect: new SchemaScopedPostgresDialect({ pool }, schema),
  });
  let storeId: string | null;
  try {
    const mayCreate = options.create && !options.readOnly;
    let found = await inventory(pool, schema);
    if (!found) {
      if (!mayCreate) {
        throw new StoreNotFoundError(target, `schema ${schema} does not exist`);
      }
      await createSchema(pool, schema);
      found = { tables: [], migrations: [] };
    }
    if (recognizeStore(target, found) === "empty" && !mayCreate) {
      throw new NotAnEventStoreError(target, `no events table in schema ${schema}`);
    }
    if (!options.readOnly && logMigrationNames.some((m) => !found.migrations.includes(m))) {
      // Without an explicit schema Kysely looks for its migration tables in every schema, and
      // would take another log's for this one's.
      const { error } = await new Migrator({
        db,
        provider: logMigrations("postgres"),
        migrationTableSchema: schema,
      }).migrateToLatest();
      if (error) {
        throw new StoreOpenError(target, `migration failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
    }
    storeId = await storeIdOf(pool, schema);
  } catch (err) {
    await db.destroy().catch(() => {});
    throw postgresOpenError(target, parsed, schema, err);
  }
  const connect = () => new pg.Client({ connectionString: parsed.toString() });
  const backend = new PostgresBackend(
    db,
    target,
    storeId,
    appendLockKey(schema),
    appendChannel(schema),
    connect,
  );
  return options.readOnly ? readOnlyBackend(backend) : backend;
}

/** The NOTIFY channel on which appends to the log in `schema` are announced. */
export function appendChannel(schema: string): string {
  return `polyrl_append_${sha256Hex(schema).slice(0, 16)}`;
}

/** The part of a `pg.Client` that listening uses (pg ships without types). */
interface ListenClient {
  connect(): Promise<unknown>;
  query(text: string): Promise<unknown>;
  on(event: "notification" | "error", listener: () => void): unknown;
  end(): Promise<unknown>;
}

/** The advisory lock that serializes appends to the log in `schema`, as an int8 literal. */
export function appendLockKey(schema: string): string {
  return BigInt.asIntN(64, BigInt(`0x${sha256Hex(`polyrl.append.${schema}`).slice(0, 16)}`))
    .toString();
}

class PostgresBackend implements Backend {
  readonly kind = "postgres" as const;
  readonly readOnly = false;
  readonly blobs;

  #watchers = new Set<() => void>();
  #listener: Promise<ListenClient | undefined> | undefined;

  constructor(
    readonly db: Kysely<LogDatabase>,
    readonly target: string,
    readonly storeId: string | null,
    readonly lockKey: string,
    readonly channel: string,
    readonly connect: () => ListenClient,
  ) {
    this.blobs = tableBlobStore(db);
  }

  // One LISTEN connection per store, opened for the first watcher. If it cannot be opened or
  // drops, watchers fall back to their polling interval.
  #listen(): Promise<ListenClient | undefined> {
    this.#listener ??= (async () => {
      const client = this.connect();
      try {
        await client.connect();
        client.on("notification", () => this.#watchers.forEach((wake) => wake()));
        client.on("error", () => {
          this.#listener = undefined;
        });
        await client.query(`LISTEN ${this.channel}`);
        return client;
      } catch {
        this.#listener = undefined;
        await client.end().catch(() => {});
        return undefined;
      }
    })();
    return this.#listener;
  }

  watch(onAppend: () => void) {
    this.#watchers.add(onAppend);
    return {
      ready: this.#listen().then(() => {}),
      stop: () => void this.#watchers.delete(onAppend),
    };
  }

  write<T>(fn: (tx: WriteTx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${this.lockKey}::bigint)`.execute(trx);
      return fn({
        head: (stream) => headOf(trx, stream),
        lastPosition: () => lastPositionOf(trx),
        existing: async (ids) => {
          const rows: EventRow[] = [];
          for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
            const chunk = ids.slice(i, i + INSERT_CHUNK);
            const found = await trx.selectFrom("events").selectAll().where("id", "in", chunk)
              .execute();
            rows.push(...found.map(eventRow));
          }
          return rows;
        },
        insert: async (rows, head) => {
          for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
            await trx.insertInto("events").values(
              rows.slice(i, i + INSERT_CHUNK).map((r) => ({
                position: r.position,
                id: r.id,
                stream: r.stream,
                version: r.version,
                type: r.type,
                schema_version: r.schemaVersion,
                data: r.data,
                tensors: r.tensors,
                hash: r.hash,
                recorded_at: r.recordedAt,
              })),
            ).execute();
          }
          await trx.insertInto("streams").values(head).onConflict((oc) =>
            oc.column("stream").doUpdateSet({
              version: head.version,
              hash: head.hash,
              position: head.position,
            })
          ).execute();
          // Delivered at commit: subscribers on other machines wake without waiting for a poll.
          await sql`SELECT pg_notify(${this.channel}, ${String(head.position)})`.execute(trx);
        },
      });
    });
  }

  async readAll(from: number, limit: number) {
    const rows = await this.db.selectFrom("events").selectAll().where("position", ">=", from)
      .orderBy("position").limit(limit).execute();
    return rows.map(eventRow);
  }

  async readStream(stream: string, fromVersion: number, limit: number) {
    const rows = await this.db.selectFrom("events").selectAll().where("stream", "=", stream)
      .where("version", ">=", fromVersion).orderBy("version").limit(limit).execute();
    return rows.map(eventRow);
  }

  head(stream: string) {
    return headOf(this.db, stream);
  }

  async heads() {
    return (await this.db.selectFrom("streams").selectAll().orderBy("stream").execute()).map(
      headRow,
    );
  }

  lastPosition() {
    return lastPositionOf(this.db);
  }

  async putLease(lease: RunLease) {
    const row = {
      run_id: lease.runId,
      host: lease.host,
      pid: lease.pid,
      started_at: lease.startedAt,
      heartbeat_at: lease.heartbeatAt,
      ended_at: lease.endedAt,
    };
    await this.db.insertInto("run_leases").values(row).onConflict((oc) =>
      oc.column("run_id").doUpdateSet({
        host: row.host,
        pid: row.pid,
        started_at: row.started_at,
        heartbeat_at: row.heartbeat_at,
        ended_at: row.ended_at,
      })
    ).execute();
  }

  async leases() {
    // A store opened read-only may predate the table: it then holds no leases.
    const { rows } = await sql<Record<string, unknown>>`
      SELECT to_regclass('run_leases') IS NOT NULL AS present`.execute(this.db);
    if (!rows[0]?.present) return [];
    const found = await sql<Record<string, unknown>>`${sql.raw(LEASE_SELECT)} ORDER BY run_id`
      .execute(this.db);
    return found.rows.map(leaseRow);
  }

  async close() {
    this.#watchers.clear();
    const listener = await this.#listener;
    await listener?.end().catch(() => {});
    await this.db.destroy();
  }
}

async function headOf(db: Kysely<LogDatabase>, stream: string) {
  const r = await db.selectFrom("streams").selectAll().where("stream", "=", stream)
    .executeTakeFirst();
  return r && headRow(r);
}

async function lastPositionOf(db: Kysely<LogDatabase>): Promise<number> {
  const r = await db.selectFrom("events").select((eb) => eb.fn.max("position").as("p"))
    .executeTakeFirst();
  return Number(r?.p ?? 0);
}
