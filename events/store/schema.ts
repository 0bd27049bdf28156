/**
 * The one schema both stores share, as Kysely table types and Kysely migrations. The migrations
 * take the dialect only to pick column types that each database spells differently (a byte
 * column, and SQLite's `integer primary key` that makes the global position the rowid).
 *
 * @example
 * ```ts
 * import type { Kysely } from "kysely";
 * import { Migrator } from "kysely/migration";
 * import { type LogDatabase, logMigrations } from "./schema.ts";
 *
 * declare const db: Kysely<LogDatabase>;
 * const migrator = new Migrator({ db, provider: logMigrations("postgres") });
 * await migrator.migrateToLatest();
 * ```
 */
import { type Kysely, sql } from "kysely";
import type { Migration, MigrationProvider } from "kysely/migration";

/** Row of `events`: one immutable event. */
export interface EventsTable {
  position: number;
  id: string;
  stream: string;
  version: number;
  type: string;
  schema_version: number;
  /** canonical JSON of the data */
  data: string;
  /** little-endian typed-array bytes referenced from `data` */
  tensors: Uint8Array;
  /** sha256(prev_hash || canonical_bytes), hex */
  hash: string;
  recorded_at: number;
}

/** Row of `streams`: each stream's head, written with every append (detects tail truncation). */
export interface StreamsTable {
  stream: string;
  version: number;
  hash: string;
  position: number;
}

/** Row of `blobs`: the table-backed blob store. */
export interface BlobsTable {
  hash: string;
  size: number;
  bytes: Uint8Array;
}

/** Row of `store_meta`: facts about the store itself, written once (`store_id`: a UUID). */
export interface StoreMetaTable {
  key: string;
  value: string;
}

/**
 * Row of `run_leases`: the process writing a run and when it last said it was alive. Not part of
 * the log (never hashed, verified or replayed): a heartbeat a writer renews and clears on exit,
 * so readers can tell a run whose process died from one still training.
 */
export interface RunLeasesTable {
  run_id: string;
  host: string;
  pid: number;
  /** ms since the Unix epoch (UTC) */
  started_at: number;
  heartbeat_at: number;
  /** set when the writer let go (its run ended or it exited); null while it holds the lease */
  ended_at: number | null;
}

/** The log's tables as Kysely sees them. */
export interface LogDatabase {
  events: EventsTable;
  streams: StreamsTable;
  blobs: BlobsTable;
  store_meta: StoreMetaTable;
  run_leases: RunLeasesTable;
}

/** The SQL dialects the log runs on. */
export type Dialect = "sqlite" | "postgres";

function initial(dialect: Dialect): Migration {
  const bytes = dialect === "sqlite" ? "blob" : "bytea";
  const bigint = dialect === "sqlite" ? "integer" : "bigint";
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.createTable("events")
        .addColumn("position", bigint, (c) => c.primaryKey())
        .addColumn("id", "text", (c) => c.notNull().unique())
        .addColumn("stream", "text", (c) => c.notNull())
        .addColumn("version", bigint, (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("schema_version", "integer", (c) => c.notNull())
        .addColumn("data", "text", (c) => c.notNull())
        .addColumn("tensors", bytes, (c) => c.notNull())
        .addColumn("hash", "text", (c) => c.notNull())
        .addColumn("recorded_at", bigint, (c) => c.notNull())
        .addUniqueConstraint("events_stream_version", ["stream", "version"])
        .execute();
      await db.schema.createTable("streams")
        .addColumn("stream", "text", (c) => c.primaryKey())
        .addColumn("version", bigint, (c) => c.notNull())
        .addColumn("hash", "text", (c) => c.notNull())
        .addColumn("position", bigint, (c) => c.notNull())
        .execute();
      await db.schema.createTable("blobs")
        .addColumn("hash", "text", (c) => c.primaryKey())
        .addColumn("size", bigint, (c) => c.notNull())
        .addColumn("bytes", bytes, (c) => c.notNull())
        .execute();
      // Readers that project one event type (analysis, dashboards) scan by type in log order.
      await db.schema.createIndex("events_type_position").on("events").columns([
        "type",
        "position",
      ]).execute();
    },
    async down(db: Kysely<unknown>) {
      for (const table of ["blobs", "streams", "events"]) {
        await sql`drop table ${sql.table(table)}`.execute(db);
      }
    },
  };
}

// The store's identity: a random id written once, when the store is made (or, for a store made
// before this migration, when it is first opened for writing). Projections remember it, so a
// store replaced at the same path is never taken for the one they were built from.
const storeMeta: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createTable("store_meta")
      .addColumn("key", "text", (c) => c.primaryKey())
      .addColumn("value", "text", (c) => c.notNull())
      .execute();
    await sql`insert into store_meta (key, value) values ('store_id', ${crypto.randomUUID()})`
      .execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`drop table store_meta`.execute(db);
  },
};

// Writer leases: one row per run, upserted by its training process every few seconds.
function runLeases(dialect: Dialect): Migration {
  const bigint = dialect === "sqlite" ? "integer" : "bigint";
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.createTable("run_leases")
        .addColumn("run_id", "text", (c) => c.primaryKey())
        .addColumn("host", "text", (c) => c.notNull())
        .addColumn("pid", bigint, (c) => c.notNull())
        .addColumn("started_at", bigint, (c) => c.notNull())
        .addColumn("heartbeat_at", bigint, (c) => c.notNull())
        .addColumn("ended_at", bigint)
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await sql`drop table run_leases`.execute(db);
    },
  };
}

const MIGRATION_NAMES = ["0001_event_log", "0002_store_meta", "0003_run_leases"] as const;

/** The names of the log's migrations, in order; each starts with its schema version. */
export const logMigrationNames: readonly string[] = MIGRATION_NAMES;

/** The schema version a migration name stands for (its number prefix), or NaN. */
export function migrationVersion(name: string): number {
  const m = /^(\d+)_/.exec(name);
  return m ? Number(m[1]) : NaN;
}

/** The schema version this code writes: that of its last migration. */
export const LOG_SCHEMA_VERSION = migrationVersion(MIGRATION_NAMES[MIGRATION_NAMES.length - 1]);

/** The migrations of the log, in order, for one dialect. */
export function logMigrations(dialect: Dialect): MigrationProvider {
  const migrations: Record<(typeof MIGRATION_NAMES)[number], Migration> = {
    "0001_event_log": initial(dialect),
    "0002_store_meta": storeMeta,
    "0003_run_leases": runLeases(dialect),
  };
  return { getMigrations: () => Promise.resolve(migrations) };
}
