/**
 * One `BEGIN IMMEDIATE` transaction on an SQLite connection, committed when `fn` returns and
 * rolled back when it throws, with the error that matters kept. SQLite rolls a transaction back
 * by itself on some errors (a full disk, an I/O error): a ROLLBACK then fails with "no
 * transaction is active", which must not replace the disk-full error. So ROLLBACK runs only while
 * a transaction is open, and a failing ROLLBACK is attached to the original error, never thrown
 * instead of it.
 *
 * @example
 * ```ts
 * import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
 * import { immediateTransaction } from "./sqlite-transaction.ts";
 *
 * declare const db: DatabaseSync;
 * declare const path: string; // the store's file, named in errors
 * declare const insert: StatementSync;
 * declare const values: SQLInputValue[];
 * await immediateTransaction(db, path, () => insert.run(...values));
 * ```
 */
import type { DatabaseSync } from "node:sqlite";
import { isSqliteError, sqliteWriteError } from "./sqlite-errors.ts";

function rollback(db: DatabaseSync): unknown {
  if (!db.isTransaction) return undefined;
  try {
    db.exec("ROLLBACK");
    return undefined;
  } catch (err) {
    return err;
  }
}

/**
 * Runs `fn` in a write transaction of `db` (the store at `target`). Driver errors come back as
 * StoreWriteError or StoreCorruptError (the driver's error as `cause`); errors of `fn` itself
 * come back unchanged, with a failed ROLLBACK's error as their `cause`.
 */
export async function immediateTransaction<T>(
  db: DatabaseSync,
  target: string,
  fn: () => Promise<T> | T,
): Promise<T> {
  try {
    db.exec("BEGIN IMMEDIATE");
    const out = await fn();
    db.exec("COMMIT");
    return out;
  } catch (err) {
    const rollbackError = rollback(db);
    if (isSqliteError(err)) throw sqliteWriteError(target, err, rollbackError);
    if (rollbackError !== undefined && err instanceof Error && err.cause === undefined) {
      err.cause = rollbackError;
    }
    throw err;
  }
}
