import type { DuckDBConnection } from "@duckdb/node-api";
import { MalformedSqlError, RefusedFunctionError, WriteRefusedError } from "./sql-errors.ts";
import { sqlString } from "./sql-string.ts";

/** What DuckDB's `json_serialize_sql` answers: the parsed statements, or why it could not. */
type Serialized =
  | { readonly error: false; readonly statements: readonly unknown[] }
  | { readonly error: true; readonly error_type: string; readonly error_message: string };

const LOGGING = "changes DuckDB's logging for the whole instance (`lock_configuration` does not " +
  "stop it); with file storage it writes log files where the query says, and where files are " +
  "shut off it leaves the instance failing every query and aborting the process when a " +
  "connection closes";
const PROFILING = "turns DuckDB's profiler on or off for the whole instance past this query, " +
  "and writes its output to a file the query names";
const PARSER = "switches or drives DuckDB's SQL parser outside the statement checked here";
const SQL_TEXT = "runs SQL given as text, which is not the statement checked here";

/**
 * Functions a read-only query may not call, by lower-case name, with why. Each is reachable from
 * a SELECT, and none is stopped by `lock_configuration` or READ_ONLY: they change the instance
 * past the query, write files, or run SQL text that was never checked. Every other table function
 * of DuckDB 1.5 reads (tests/security/sql-lockdown_test.ts lists them, so an upgrade that adds
 * one fails there until it is judged).
 */
export const REFUSED_FUNCTIONS: ReadonlyMap<string, string> = new Map([
  ["enable_logging", LOGGING],
  ["disable_logging", LOGGING],
  ["truncate_duckdb_logs", LOGGING],
  ["write_log", LOGGING],
  ["enable_profiling", PROFILING],
  ["disable_profiling", PROFILING],
  ["enable_peg_parser", PARSER],
  ["disable_peg_parser", PARSER],
  ["check_peg_parser", PARSER],
  ["json_serialize_sql", PARSER],
  ["json_deserialize_sql", PARSER],
  [
    "json_serialize_plan",
    "plans (binds) the statement given as text, and binding alone has " +
    "side effects (EXPORT DATABASE creates its folder)",
  ],
  ["json_execute_serialized_sql", SQL_TEXT],
  ["query", SQL_TEXT],
  ["query_table", SQL_TEXT],
  ["checkpoint", "writes the database file"],
  ["force_checkpoint", "writes the database file"],
  ["arrow_scan", "reads memory at the addresses it is given"],
  ["arrow_scan_dumb", "reads memory at the addresses it is given"],
]);

/**
 * Accepts exactly one SELECT statement, as DuckDB's own parser reads `sql`, that calls none of
 * REFUSED_FUNCTIONS: `json_serialize_sql` serializes SELECT statements only (DESCRIBE, SHOW,
 * SUMMARIZE, FROM-first and VALUES are SELECTs to it) and answers every other statement, EXPLAIN
 * ANALYZE of a write included, with an error; the functions are read from the parse tree it
 * returns. Nothing is prepared, bound or extracted before the answer (DuckDB's statement
 * extraction runs pragmas: IMPORT DATABASE reads the folder it names), so a refused statement has
 * no side effect (binding EXPORT DATABASE, for one, creates its folder). Throws MalformedSqlError
 * (a parse error, or not exactly one statement; DuckDB counts a PIVOT statement as several),
 * WriteRefusedError (one statement that is not a SELECT; the error names it by the text's first
 * keyword, the decision is the parser's) or RefusedFunctionError (a WriteRefusedError).
 *
 * @example
 * ```ts
 * import type { DuckDBConnection } from "@duckdb/node-api";
 * import { requireReadOnlyStatement } from "./read-only-statement.ts";
 * declare const conn: DuckDBConnection;
 *
 * await requireReadOnlyStatement(conn, "SELECT count(*) FROM turns"); // ok
 * await requireReadOnlyStatement(conn, "EXPLAIN ANALYZE DELETE FROM turns"); // WriteRefusedError
 * await requireReadOnlyStatement(conn, "FROM enable_logging()"); // RefusedFunctionError
 * ```
 */
export async function requireReadOnlyStatement(conn: DuckDBConnection, sql: string): Promise<void> {
  // DuckDB reads SQL as a C string: a NUL would cut the text short (and the literal below open).
  if (sql.includes("\0")) throw new MalformedSqlError(sql, "the SQL text contains a NUL character");
  let parsed: Serialized;
  try {
    // json_serialize_sql takes a constant only, so the text goes in as a quoted literal.
    const reader = await conn.runAndReadAll(
      `SELECT json_serialize_sql(${sqlString(sql)})::VARCHAR`,
    );
    parsed = JSON.parse(String(reader.getRowsJS()[0][0])) as Serialized;
  } catch (err) {
    throw new MalformedSqlError(sql, (err as Error).message);
  }
  if (parsed.error && parsed.error_type === "parser") {
    throw new MalformedSqlError(sql, `Parser Error: ${parsed.error_message}`);
  }
  if (parsed.error) {
    // Not all SELECTs: the text's own statements, counted for the message only (the statement is
    // refused either way); DuckDB's statement extraction is never asked, it runs pragmas.
    const { count, words } = scanStatements(sql);
    if (count === 1 && (words.has("PIVOT") || words.has("UNPIVOT"))) {
      throw new MalformedSqlError(
        sql,
        "expected exactly one statement, got 2: DuckDB runs a PIVOT without an IN list as two " +
          "(it first creates an ENUM of the values); name them: PIVOT t ON col IN (a, b) USING ...",
      );
    }
    if (count !== 1) {
      throw new MalformedSqlError(sql, `expected exactly one statement, got ${count}`);
    }
    throw new WriteRefusedError(leadingKeyword(sql));
  }
  if (parsed.statements.length !== 1) {
    throw new MalformedSqlError(
      sql,
      `expected exactly one statement, got ${parsed.statements.length}`,
    );
  }
  const refused = calledFunctions(parsed.statements).find((name) => REFUSED_FUNCTIONS.has(name));
  if (refused !== undefined) {
    throw new RefusedFunctionError(refused, REFUSED_FUNCTIONS.get(refused)!);
  }
}

/**
 * Every function a parse tree calls, lower-case: scalar, aggregate, window and table functions
 * all carry a `function_name` in json_serialize_sql's tree, wherever they sit (subqueries, CTEs,
 * lambdas, FROM).
 */
export function calledFunctions(tree: unknown): string[] {
  const names: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) {
      for (const child of node) walk(child);
    } else if (node !== null && typeof node === "object") {
      for (const [key, value] of Object.entries(node)) {
        if (key === "function_name" && typeof value === "string") names.push(value.toLowerCase());
        else walk(value);
      }
    }
  };
  walk(tree);
  return names;
}

/** The statement's first keyword after comments, upper-cased, to name it in the refusal. */
function leadingKeyword(sql: string): string {
  const body = sql.replace(/^(\s+|--[^\n]*\n?|\/\*[\s\S]*?\*\/)*/, "");
  return body.match(/^[A-Za-z]+/)?.[0].toUpperCase() ?? "this statement";
}

/**
 * How many statements `sql` holds, split at semicolons outside quotes, dollar quotes and
 * comments (empty ones are not counted), and its bare words upper-cased. Only shapes the message
 * of a refusal: the parser decides.
 */
function scanStatements(sql: string): { count: number; words: Set<string> } {
  let count = 0;
  let content = false;
  const words = new Set<string>();
  const token =
    /'(?:[^']|'')*'?|"(?:[^"]|"")*"?|(\$[A-Za-z_0-9]*\$)[\s\S]*?(?:\1|$)|--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)|;|\s+|[A-Za-z_][A-Za-z_0-9]*|[^'"$;\s/A-Za-z_-]+|./g;
  for (const [text] of sql.matchAll(token)) {
    if (text === ";") {
      if (content) count++;
      content = false;
    } else if (!/^\s/.test(text) && !text.startsWith("--") && !text.startsWith("/*")) {
      content = true;
      if (/^[A-Za-z_]/.test(text)) words.add(text.toUpperCase());
    }
  }
  return { count: count + (content ? 1 : 0), words };
}
