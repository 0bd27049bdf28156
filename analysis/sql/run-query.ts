import { type DuckDBConnection, type JS, JSDuckDBValueConverter } from "@duckdb/node-api";
import { withDeadline } from "./query-deadline.ts";
import { requireReadOnlyStatement } from "./read-only-statement.ts";
import { rowBytes } from "./result-bytes.ts";
import { MalformedSqlError, QueryTimeoutError, ResultTooLargeError } from "./sql-errors.ts";
import { sqlString } from "./sql-string.ts";

export { sqlString };

/** A query's result: column names and rows of JS values (BIGINT as bigint). */
export interface QueryTable {
  readonly kind: "query-table";
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
  /** true when the query had more rows than `maxRows`, or than fit in `maxBytes`, and only the
   * first ones are here */
  readonly truncated: boolean;
}

/** Bounds on one query: wall time inside DuckDB, rows read back and their size. */
export interface QueryLimits {
  readonly timeoutMs?: number;
  readonly maxRows?: number;
  /**
   * bytes of the rows read back, as JSON text (estimated from DuckDB's vectors before a value is
   * converted, see result-bytes.ts): rows past it are left out and the result is `truncated`; a
   * first row over it is a ResultTooLargeError
   */
  readonly maxBytes?: number;
}

/**
 * Runs one read-only statement after `requireReadOnlyStatement` has accepted it. With
 * `maxRows` or `maxBytes` the result is streamed and reading stops at the limit (rows past a
 * limit are never converted to JS values); with `timeoutMs` DuckDB is interrupted when the time
 * is up (QueryTimeoutError). Any error DuckDB raises is the query's: a MalformedSqlError.
 *
 * @example
 * ```ts
 * import type { DuckDBConnection } from "@duckdb/node-api";
 * import { runReadOnlyQuery } from "./run-query.ts";
 * declare const conn: DuckDBConnection;
 *
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
  const { timeoutMs } = limits;
  const read = (signal?: AbortSignal) =>
    limits.maxRows === undefined && limits.maxBytes === undefined
      ? readAll(conn, sql)
      : readBounded(conn, sql, limits, signal);
  try {
    return await (timeoutMs === undefined ? read() : withDeadline(conn, timeoutMs, read));
  } catch (err) {
    if (err instanceof QueryTimeoutError || err instanceof ResultTooLargeError) throw err;
    throw new MalformedSqlError(sql, (err as Error).message);
  }
}

async function readAll(conn: DuckDBConnection, sql: string): Promise<QueryTable> {
  const reader = await conn.runAndReadAll(sql);
  return Object.freeze({
    kind: "query-table",
    columns: reader.columnNames(),
    rows: reader.getRowsJS(),
    truncated: false,
  });
}

/** Reads chunk by chunk until the rows or the bytes run out; stops between chunks at `signal`. */
async function readBounded(
  conn: DuckDBConnection,
  sql: string,
  { maxRows = Infinity, maxBytes = Infinity }: QueryLimits,
  signal?: AbortSignal,
): Promise<QueryTable> {
  const result = await conn.stream(sql);
  const columns = result.columnNames();
  const rows: JS[][] = [];
  let bytes = 0;
  let truncated = false;
  reading: while (true) {
    signal?.throwIfAborted();
    const chunk = await result.fetchChunk();
    signal?.throwIfAborted();
    if (!chunk || chunk.rowCount === 0) break;
    const sizes = maxBytes === Infinity ? null : rowBytes(chunk);
    for (let r = 0; r < chunk.rowCount; r++) {
      if (rows.length === maxRows || (sizes && bytes + sizes[r] > maxBytes)) {
        if (rows.length === 0) throw new ResultTooLargeError(maxBytes);
        truncated = true;
        break reading;
      }
      bytes += sizes?.[r] ?? 0;
      rows.push(chunk.convertRowValues(r, JSDuckDBValueConverter) as JS[]);
    }
  }
  return Object.freeze({ kind: "query-table", columns, rows, truncated });
}

/**
 * Writes the result of one read-only query to a Parquet file with DuckDB's COPY. The query goes
 * to DuckDB's `query()` as a bound parameter, never spliced into the COPY, and `query()` itself
 * runs a single SELECT only; the one file written is `out`.
 *
 * @example
 * ```ts
 * import type { DuckDBConnection } from "@duckdb/node-api";
 * import { writeQueryParquet } from "./run-query.ts";
 * declare const conn: DuckDBConnection;
 *
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
