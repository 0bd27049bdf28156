/**
 * Tells an event store from anything else by what a database (SQLite) or schema (Postgres) holds,
 * before anything is written to it: an empty one may become a store, one holding another
 * application's tables is refused, and a store migrated by newer code is refused with the
 * versions named.
 *
 * @example
 * ```ts
 * import { recognizeStore } from "./recognize-store.ts";
 *
 * recognizeStore("runs.sqlite", { tables: ["notes"], migrations: [] }); // NotAnEventStoreError
 * recognizeStore("runs.sqlite", { tables: [], migrations: [] }); // "empty"
 * ```
 */
import { NotAnEventStoreError, StoreOpenError, StoreVersionError } from "../errors.ts";
import { LOG_SCHEMA_VERSION, logMigrationNames, migrationVersion } from "./schema.ts";

/** What a database holds, as far as recognizing an event store goes. */
export interface StoreInventory {
  /** its tables */
  readonly tables: readonly string[];
  /** the names recorded in `kysely_migration` (none when that table is absent) */
  readonly migrations: readonly string[];
}

/** Kysely's bookkeeping tables, made before the first migration runs. */
const MIGRATION_TABLES = new Set(["kysely_migration", "kysely_migration_lock"]);

/**
 * `"empty"`: nothing but (possibly) Kysely's bookkeeping, so a store can be made here;
 * `"store"`: an event store this code can read. Throws NotAnEventStoreError for anything else,
 * StoreVersionError for a store from newer code.
 */
export function recognizeStore(target: string, inventory: StoreInventory): "empty" | "store" {
  const { tables, migrations } = inventory;
  const ours = migrations.filter((m) => logMigrationNames.includes(m));
  if (!tables.includes("events")) {
    const others = tables.filter((t) => !MIGRATION_TABLES.has(t));
    if (others.length > 0) {
      throw new NotAnEventStoreError(target, `no events table; it holds ${others.join(", ")}`);
    }
    if (ours.length < migrations.length) {
      throw new NotAnEventStoreError(target, "no events table; its migrations are another's");
    }
    return "empty";
  }
  if (ours.length === 0) {
    throw new NotAnEventStoreError(target, "its events table was not made by polyrl");
  }
  const unknown = migrations.filter((m) => !logMigrationNames.includes(m));
  if (unknown.length > 0) {
    const stored = Math.max(...unknown.map(migrationVersion));
    if (stored > LOG_SCHEMA_VERSION) {
      throw new StoreVersionError(target, stored, LOG_SCHEMA_VERSION);
    }
    throw new StoreOpenError(
      target,
      `its schema record lists ${unknown.join(", ")}, which this code (schema version ` +
        `${LOG_SCHEMA_VERSION}) does not know; it was written by another build of polyrl`,
    );
  }
  return "store";
}
