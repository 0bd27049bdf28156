import type { DuckDBConnection } from "@duckdb/node-api";
import { requireReadOnlyStatement } from "./read-only-statement.ts";
import { MalformedSqlError } from "./sql-errors.ts";

/** A query's result: column names and rows of JS values (BIGINT as bigint). */
export interface QueryTable {
  readonly kind: "query-table";
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
}

/**
 * Runs one read-only statement after `requireReadOnlyStatement` has accepted it.
 *
 * @example
 * ```ts
 * const t = await runReadOnlyQuery(conn, "SELECT run_id, estimator FROM runs");
 * ```
 */
export async function runReadOnlyQuery(conn: DuckDBConnection, sql: string): Promise<QueryTable> {
  await requireReadOnlyStatement(conn, sql);
  try {
    const reader = await conn.runAndReadAll(sql);
    return Object.freeze({
      kind: "query-table",
      columns: reader.columnNames(),
      rows: reader.getRowsJS(),
    });
  } catch (err) {
    throw new MalformedSqlError(sql, (err as Error).message);
  }
}

/** A SQL string literal: single quotes doubled. */
export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * Writes the result of one read-only query to a Parquet file with DuckDB's COPY.
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
  const body = sql.trim().replace(/;\s*$/, "");
  await conn.run(`COPY (${body}) TO ${sqlString(out)} (FORMAT parquet)`);
}
