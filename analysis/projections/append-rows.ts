import type { DuckDBAppender, DuckDBConnection } from "@duckdb/node-api";
import { type ColumnType, type TableName, TABLES } from "./schema.ts";

/** A value that does not fit its column: names the table, column and value. */
export class ProjectionRowError extends Error {
  override name = "ProjectionRowError";
  constructor(readonly table: string, readonly column: string, readonly value: unknown) {
    super(`cannot write ${String(value)} to ${table}.${column}: wrong type for the column`);
  }
}

function appendValue(a: DuckDBAppender, type: ColumnType, v: unknown, table: string, col: string) {
  if (v === null || v === undefined) return a.appendNull();
  switch (type) {
    case "VARCHAR":
      if (typeof v !== "string") throw new ProjectionRowError(table, col, v);
      return a.appendVarchar(v);
    case "BIGINT":
      if (!Number.isSafeInteger(v)) throw new ProjectionRowError(table, col, v);
      return a.appendBigInt(BigInt(v as number));
    case "DOUBLE":
      if (typeof v !== "number") throw new ProjectionRowError(table, col, v);
      return a.appendDouble(v);
    case "BOOLEAN":
      if (typeof v !== "boolean") throw new ProjectionRowError(table, col, v);
      return a.appendBoolean(v);
  }
}

/**
 * Appends buffered rows to their base tables with DuckDB appenders (one per table), the bulk
 * path DuckDB offers instead of row-by-row INSERT. Runs inside the caller's transaction.
 *
 * @example
 * ```ts
 * await appendRows(conn, new Map([["steps", [["run-1", 0, 8, 2, 5, 0]]]]));
 * ```
 */
export async function appendRows(
  conn: DuckDBConnection,
  buffers: ReadonlyMap<TableName, readonly (readonly unknown[])[]>,
): Promise<void> {
  for (const [name, rows] of buffers) {
    if (rows.length === 0) continue;
    const spec = TABLES[name];
    const appender = await conn.createAppender(name);
    try {
      for (const row of rows) {
        for (let i = 0; i < spec.columns.length; i++) {
          appendValue(appender, spec.columns[i][1], row[i], name, spec.columns[i][0]);
        }
        appender.endRow();
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  }
}
