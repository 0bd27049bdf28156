import { type DuckDBConnection, StatementType } from "@duckdb/node-api";
import { MalformedSqlError, WriteRefusedError } from "./sql-errors.ts";

/** Statement types that only read: SELECT (also DESCRIBE, SHOW, SUMMARIZE, PRAGMA reads) and EXPLAIN. */
const READ_TYPES: ReadonlySet<number> = new Set([StatementType.SELECT, StatementType.EXPLAIN]);

/**
 * Parses `sql` with DuckDB and accepts exactly one read-only statement. DuckDB's parser decides
 * the statement type, so comments, CTEs and odd casing cannot smuggle a write past the check.
 * Throws MalformedSqlError (parse or bind failure, or not exactly one statement) or
 * WriteRefusedError (a statement that could change state).
 *
 * @example
 * ```ts
 * await requireReadOnlyStatement(conn, "SELECT count(*) FROM turns"); // ok
 * await requireReadOnlyStatement(conn, "DELETE FROM turns"); // WriteRefusedError
 * ```
 */
export async function requireReadOnlyStatement(conn: DuckDBConnection, sql: string): Promise<void> {
  let count: number;
  let extracted;
  try {
    extracted = await conn.extractStatements(sql);
    count = extracted.count;
  } catch (err) {
    throw new MalformedSqlError(sql, stripPrefix((err as Error).message));
  }
  if (count !== 1) {
    throw new MalformedSqlError(sql, `expected exactly one statement, got ${count}`);
  }
  let type: number;
  try {
    const prepared = await extracted.prepare(0);
    type = prepared.statementType;
    prepared.destroySync();
  } catch (err) {
    // Binding failed (unknown table or column). A write is still reported as a write, since
    // that is the answer the caller needs first; anything else gets the binder's message.
    const verb = leadingKeyword(sql);
    if (verb && !READ_VERBS.has(verb)) throw new WriteRefusedError(verb);
    throw new MalformedSqlError(sql, (err as Error).message);
  }
  if (!READ_TYPES.has(type)) throw new WriteRefusedError(StatementType[type] ?? `type ${type}`);
}

const READ_VERBS = new Set([
  "SELECT",
  "WITH",
  "FROM",
  "VALUES",
  "TABLE",
  "DESCRIBE",
  "SHOW",
  "SUMMARIZE",
  "EXPLAIN",
  "PRAGMA",
  "(",
]);

/** The first keyword after leading comments and whitespace, upper-cased. */
function leadingKeyword(sql: string): string | undefined {
  const body = sql.replace(/^(\s+|--[^\n]*\n?|\/\*[\s\S]*?\*\/)*/, "");
  return body.match(/^(\(|[A-Za-z]+)/)?.[1]?.toUpperCase();
}

function stripPrefix(message: string): string {
  return message.replace(/^Failed to extract statements: /, "");
}
