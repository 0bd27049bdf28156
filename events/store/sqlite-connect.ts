/**
 * Opens the SQLite file of a store, for writing or for reading only, and recognizes it as an
 * event store before anything is written: another application's database, an SQLite file with no
 * tables, or a store from newer code is refused untouched.
 *
 * A new store is made whole beside its path and then linked into place (createSqliteStore), so a
 * file at a store's path is a store or not ours: never one half made by another process, and an
 * empty database someone else left there is never adopted. For writing: WAL mode
 * (`synchronous=NORMAL`), and an older store's missing migrations applied under
 * `BEGIN IMMEDIATE`, so two processes upgrading it at the same moment apply them once. For
 * reading: `readOnly`, no pragma that changes the file, no migration; a WAL store in a folder this
 * process cannot write (a read-only mount) is read as immutable.
 *
 * @example
 * ```ts
 * import { connectSqlite, createSqliteStore } from "./sqlite-connect.ts";
 *
 * await createSqliteStore("runs.sqlite"); // unless a store is there already
 * const { db, storeId } = await connectSqlite("runs.sqlite", { readOnly: true });
 * ```
 */
import { DatabaseSync } from "node:sqlite";
import { basename, dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Kysely } from "kysely";
import { Migrator } from "kysely/migration";
import { NotAnEventStoreError, StoreOpenError, StoreWriteError } from "../errors.ts";
import { recognizeStore, type StoreInventory } from "./recognize-store.ts";
import { type LogDatabase, logMigrationNames, logMigrations } from "./schema.ts";
import { isSqliteError, SqliteCode, sqliteCode, sqliteOpenError } from "./sqlite-errors.ts";
import { immediateTransaction } from "./sqlite-transaction.ts";
import { nodeSqliteDialect } from "./sqlite-dialect.ts";

/** An open store database and its id. */
export interface SqliteConnection {
  readonly db: DatabaseSync;
  readonly storeId: string | null;
}

function inventory(db: DatabaseSync): StoreInventory {
  const names = (text: string) => (db.prepare(text).all() as { name: string }[]).map((r) => r.name);
  const tables = names(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
  );
  const migrations = tables.includes("kysely_migration")
    ? names("SELECT name FROM kysely_migration ORDER BY name")
    : [];
  return { tables, migrations };
}

function storeIdOf(db: DatabaseSync): string | null {
  const { tables } = inventory(db);
  if (!tables.includes("store_meta")) return null;
  const row = db.prepare("SELECT value FROM store_meta WHERE key = 'store_id'").get() as
    | { value: string }
    | undefined;
  return row?.value ?? null;
}

/** The error to report for a failure while opening `path`. */
function openError(path: string, err: unknown): unknown {
  if (err instanceof StoreOpenError) return err;
  if (err instanceof StoreWriteError) return new StoreOpenError(path, err.reason, { cause: err });
  if (isSqliteError(err)) return sqliteOpenError(path, err);
  return err;
}

/** Runs `fn` on `db`, closing `db` when `fn` throws. */
async function closingOnError<T>(
  db: DatabaseSync,
  path: string,
  fn: () => Promise<T> | T,
): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    db.close();
    throw openError(path, err);
  }
}

async function migrate(db: DatabaseSync, path: string): Promise<void> {
  const kysely = new Kysely<LogDatabase>({ dialect: nodeSqliteDialect(db) });
  await immediateTransaction(db, path, async () => {
    // Judged again inside the transaction: another process may have made the store meanwhile.
    recognizeStore(path, inventory(db));
    const { error } = await new Migrator({
      db: kysely,
      provider: logMigrations("sqlite"),
      disableTransactions: true,
    }).migrateToLatest();
    if (error) throw error;
  });
}

/** WAL mode, and the log's migrations this file lacks applied. */
async function prepareForWriting(db: DatabaseSync, path: string, found: StoreInventory) {
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  if (logMigrationNames.some((m) => !found.migrations.includes(m))) await migrate(db, path);
}

async function connectForWriting(path: string): Promise<SqliteConnection> {
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path);
  } catch (err) {
    throw openError(path, err);
  }
  return await closingOnError(db, path, async () => {
    db.exec("PRAGMA busy_timeout = 10000");
    // Recognized before WAL mode or a migration writes anything.
    const found = inventory(db);
    if (recognizeStore(path, found) === "empty") {
      throw new NotAnEventStoreError(path, "an SQLite database with no events table");
    }
    await prepareForWriting(db, path, found);
    return { db, storeId: storeIdOf(db) };
  });
}

/**
 * Makes a store at `path`, which must not exist: built and migrated in a file of its own beside
 * it, then hard-linked to `path`, which fails rather than replace a file that appeared meanwhile.
 * A process that loses that race opens the winner's store; a process killed while building
 * leaves only its own `.creating` file.
 */
export async function createSqliteStore(path: string): Promise<void> {
  const building = join(dirname(path), `.${basename(path)}.${crypto.randomUUID()}.creating`);
  try {
    const db = new DatabaseSync(building);
    await closingOnError(db, path, () => prepareForWriting(db, path, inventory(db)));
    db.close();
    await Deno.link(building, path);
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw openError(path, err);
  } finally {
    // The -wal and -shm files are gone after a clean close; any left by a failure go too.
    for (const file of [building, `${building}-wal`, `${building}-shm`]) {
      await Deno.remove(file).catch(() => {});
    }
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/**
 * A read-only connection whose first read has succeeded. A WAL store needs its -wal and -shm
 * files, which SQLite makes on first read; where it cannot (a read-only mount) and there is no
 * -wal file, no writer is connected and the main file holds every committed event, so it is
 * read as immutable.
 */
async function readableConnection(path: string): Promise<[DatabaseSync, StoreInventory]> {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    db.exec("PRAGMA busy_timeout = 10000");
    return [db, inventory(db)];
  } catch (err) {
    db.close();
    const cannotOpen = isSqliteError(err) && sqliteCode(err) === SqliteCode.cantOpen;
    if (!cannotOpen || await exists(`${path}-wal`)) throw err;
  }
  const immutable = new DatabaseSync(`${pathToFileURL(resolve(path)).href}?immutable=1`, {
    readOnly: true,
  });
  return [immutable, await closingOnError(immutable, path, () => inventory(immutable))];
}

async function connectForReading(path: string): Promise<SqliteConnection> {
  let db: DatabaseSync;
  let found: StoreInventory;
  try {
    [db, found] = await readableConnection(path);
  } catch (err) {
    throw openError(path, err);
  }
  return await closingOnError(db, path, () => {
    if (recognizeStore(path, found) === "empty") {
      throw new NotAnEventStoreError(path, "no events table");
    }
    return { db, storeId: storeIdOf(db) };
  });
}

/** Opens the database of the store at `path`, which exists (see createSqliteStore). */
export function connectSqlite(
  path: string,
  options: { readonly readOnly: boolean },
): Promise<SqliteConnection> {
  return options.readOnly ? connectForReading(path) : connectForWriting(path);
}
