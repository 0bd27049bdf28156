/**
 * What an `node:sqlite` error means for a store: the driver reports SQLite's result code
 * (`errcode`) and its terse text ("database or disk is full"); these turn them into the typed
 * errors of events/errors.ts, which say what happened to which file and what to do.
 *
 * @example
 * ```ts
 * import type { DatabaseSync } from "node:sqlite";
 * import { isSqliteError, sqliteWriteError } from "./sqlite-errors.ts";
 *
 * declare const db: DatabaseSync;
 * declare const path: string; // the store's file, named in errors
 *
 * try {
 *   db.exec("COMMIT");
 * } catch (err) {
 *   if (isSqliteError(err)) throw sqliteWriteError(path, err);
 *   throw err;
 * }
 * ```
 */
import { StoreCorruptError, StoreOpenError, StoreWriteError } from "../errors.ts";

/** SQLite's primary result codes (https://sqlite.org/rescode.html) that these map. */
export const SqliteCode = Object.freeze({
  readOnly: 8,
  ioError: 10,
  corrupt: 11,
  full: 13,
  cantOpen: 14,
  notADatabase: 26,
});

/** An error raised by `node:sqlite`. */
export interface SqliteError extends Error {
  readonly code: "ERR_SQLITE_ERROR";
  readonly errcode?: number;
}

/** Whether `err` came from the SQLite driver (rather than from code run in a transaction). */
export function isSqliteError(err: unknown): err is SqliteError {
  return err instanceof Error && (err as { code?: unknown }).code === "ERR_SQLITE_ERROR";
}

/** SQLite's fixed text for each code (`sqlite3_errstr`), for errors that come without a code. */
const CODE_TEXTS: readonly (readonly [string, number])[] = [
  ["attempt to write a readonly database", SqliteCode.readOnly],
  ["disk I/O error", SqliteCode.ioError],
  ["database disk image is malformed", SqliteCode.corrupt],
  ["database or disk is full", SqliteCode.full],
  ["unable to open database file", SqliteCode.cantOpen],
  ["file is not a database", SqliteCode.notADatabase],
];

/**
 * The primary result code of a driver error (extended codes carry it in their low byte). Errors
 * of `exec` come without `errcode` in Deno's `node:sqlite`; their message starts with SQLite's
 * text for the code.
 */
export function sqliteCode(err: SqliteError): number | undefined {
  if (err.errcode !== undefined) return err.errcode & 0xff;
  return CODE_TEXTS.find(([text]) => err.message.startsWith(text))?.[1];
}

/** What went wrong, in words that name the fix; undefined when the driver's text is all we know. */
function describe(err: SqliteError): string | undefined {
  switch (sqliteCode(err)) {
    case SqliteCode.full:
      return `the disk is full (SQLite: ${err.message}); nothing of this write was committed: ` +
        "free space and retry";
    case SqliteCode.ioError:
      return `an I/O error (SQLite: ${err.message}); nothing of this write was committed: ` +
        "check the disk and retry";
    case SqliteCode.cantOpen:
      return `SQLite cannot open the file (${err.message}); check that it is readable, and ` +
        "that its folder is writable (SQLite keeps -wal and -shm files beside a store)";
    case SqliteCode.readOnly:
      return `the file is read-only (SQLite: ${err.message}); writing needs write access to ` +
        "the file and its folder";
  }
  return undefined;
}

/** Whether the driver says the file's contents are damaged. */
function isCorrupt(err: SqliteError): boolean {
  const code = sqliteCode(err);
  return code === SqliteCode.corrupt || code === SqliteCode.notADatabase;
}

/** The typed error for a driver error raised while writing (an append, a migration). */
export function sqliteWriteError(
  target: string,
  err: SqliteError,
  rollbackError?: unknown,
): StoreWriteError | StoreCorruptError {
  if (isCorrupt(err)) {
    return new StoreCorruptError(target, `SQLite: ${err.message}`, { cause: err });
  }
  return new StoreWriteError(target, describe(err) ?? err.message, err, rollbackError);
}

/** The error to report for `err`, raised while reading: damage is named, the rest passes. */
export function sqliteReadError(target: string, err: unknown): unknown {
  if (isSqliteError(err) && isCorrupt(err)) {
    return new StoreCorruptError(target, `SQLite: ${err.message}`, { cause: err });
  }
  return err;
}

/** The typed error for a driver error raised while opening a store. */
export function sqliteOpenError(target: string, err: SqliteError): StoreOpenError {
  if (isCorrupt(err)) {
    return new StoreCorruptError(target, `SQLite: ${err.message}`, { cause: err });
  }
  return new StoreOpenError(target, describe(err) ?? err.message, { cause: err });
}
