import type { DuckDBConnection } from "@duckdb/node-api";
import { withDeadline } from "./query-deadline.ts";
import { requireReadOnlyStatement } from "./read-only-statement.ts";
import { MalformedSqlError, QueryTimeoutError } from "./sql-errors.ts";
import { sqlString } from "./sql-string.ts";

export { sqlString };

/** A query's result: column names and rows of JS values (BIGINT as bigint). */
export interface QueryTable {
  readonly kind: "query-table";
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
  /** true when the query had more rows than `maxRows` and only the first ones are here */
  readonly truncated: boolean;
}

/** Bounds on one query: wall time inside DuckDB and rows read back. */
export interface QueryLimits {
  readonly timeoutMs?: number;
  readonly maxRows?: number;
}

/**
 * Runs one read-only statement after `requireReadOnlyStatement` has accepted it. With
 * `maxRows` the result is streamed and reading stops after that many rows; with `timeoutMs`
 * DuckDB is interrupted when the time is up (QueryTimeoutError).
 *
 * @example
 * ```ts
 * const t = await runReadOnlyQuery(conn, "SELECT run_id, estimator FROM runs");
 * const capped = await runReadOnlyQuery(conn, "FROM turns", { timeoutMs: 10_000, maxRows: 10_000 });
 * ```
 */
export async function runReadOnlyQuery(
  conn: DuckDBConnection,
  sql: string,
  limits: QueryLimits = {},
): Promise<QueryTable> {
  await requireReadOnlyStatement(conn, sql);
  const { maxRows, timeoutMs } = limits;
  const read = () =>
    maxRows === undefined ? conn.runAndReadAll(sql) : conn.streamAndReadUntil(sql, maxRows + 1);
  try {
    const reader = await (timeoutMs === undefined ? read() : withDeadline(conn, timeoutMs, read));
    const rows = reader.getRowsJS();
    const truncated = maxRows !== undefined && rows.length > maxRows;
    return Object.freeze({
      kind: "query-table",
      columns: reader.columnNames(),
      rows: truncated ? rows.slice(0, maxRows) : rows,
      truncated,
    });
  } catch (err) {
    if (err instanceof QueryTimeoutError) throw err;
    throw new MalformedSqlError(sql, (err as Error).message);
  }
}

/**
 * Writes the result of one read-only query to a Parquet file with DuckDB's COPY. The query goes
 * to DuckDB's `query()` as a bound parameter, never spliced into the COPY, and `query()` itself
 * runs a single SELECT only; the one file written is `out`.
 *
 * @example
 * ```ts
 * await writeQueryParquet(conn, "SELECT * FROM evals", "evals.parquet");
 * ```
 */
export async function writeQueryParquet(
  conn: DuckDBConnection,
  sql: string,
  out: string,
): Promise<void> {
  await requireReadOnlyStatement(conn, sql);
  await conn.run(`COPY (FROM query($1)) TO ${sqlString(out)} (FORMAT parquet)`, [sql]);
}
