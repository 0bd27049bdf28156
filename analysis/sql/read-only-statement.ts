import type { DuckDBConnection } from "@duckdb/node-api";
import { MalformedSqlError, WriteRefusedError } from "./sql-errors.ts";
import { sqlString } from "./sql-string.ts";

/** What DuckDB's `json_serialize_sql` answers: the parsed statements, or why it could not. */
type Serialized =
  | { readonly error: false; readonly statements: readonly unknown[] }
  | { readonly error: true; readonly error_type: string; readonly error_message: string };

/**
 * Accepts exactly one SELECT statement, as DuckDB's own parser reads `sql`: `json_serialize_sql`
 * serializes SELECT statements only (DESCRIBE, SHOW, SUMMARIZE, FROM-first and VALUES are SELECTs
 * to it) and answers every other statement, EXPLAIN ANALYZE of a write included, with an error.
 * Nothing is prepared or bound before the answer, so a refused statement has no side effect
 * (binding EXPORT DATABASE, for one, creates its folder). Throws MalformedSqlError (a parse
 * error, or not exactly one statement; DuckDB counts a PIVOT statement as several) or
 * WriteRefusedError (one statement that is not a SELECT; the error names it by the text's first
 * keyword, the decision is the parser's).
 *
 * @example
 * ```ts
 * await requireReadOnlyStatement(conn, "SELECT count(*) FROM turns"); // ok
 * await requireReadOnlyStatement(conn, "EXPLAIN ANALYZE DELETE FROM turns"); // WriteRefusedError
 * ```
 */
export async function requireReadOnlyStatement(conn: DuckDBConnection, sql: string): Promise<void> {
  // DuckDB reads SQL as a C string: a NUL would cut the text short (and the literal below open).
  if (sql.includes("\0")) throw new MalformedSqlError(sql, "the SQL text contains a NUL character");
  // json_serialize_sql takes a constant only, so the text goes in as a quoted literal.
  const reader = await conn.runAndReadAll(`SELECT json_serialize_sql(${sqlString(sql)})::VARCHAR`);
  const parsed = JSON.parse(String(reader.getRowsJS()[0][0])) as Serialized;
  if (parsed.error && parsed.error_type === "parser") {
    throw new MalformedSqlError(sql, `Parser Error: ${parsed.error_message}`);
  }
  // Not all SELECTs: several statements are named as such (extracting parses, binds nothing).
  const count = parsed.error ? (await conn.extractStatements(sql)).count : parsed.statements.length;
  if (count !== 1) {
    throw new MalformedSqlError(sql, `expected exactly one statement, got ${count}`);
  }
  if (parsed.error) throw new WriteRefusedError(leadingKeyword(sql));
}

/** The statement's first keyword after comments, upper-cased, to name it in the refusal. */
function leadingKeyword(sql: string): string {
  const body = sql.replace(/^(\s+|--[^\n]*\n?|\/\*[\s\S]*?\*\/)*/, "");
  return body.match(/^[A-Za-z]+/)?.[0].toUpperCase() ?? "this statement";
}
