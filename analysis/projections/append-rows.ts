import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  type DuckDBConnection,
  DuckDBDataChunk,
  type DuckDBType,
  type DuckDBValue,
  VARCHAR,
} from "@duckdb/node-api";
import { type ColumnType, type TableName, TABLES } from "./schema.ts";

/** A value that does not fit its column: names the table, column and value. */
export class ProjectionRowError extends Error {
  override name = "ProjectionRowError";
  constructor(readonly table: string, readonly column: string, readonly value: unknown) {
    super(`cannot write ${String(value)} to ${table}.${column}: wrong type for the column`);
  }
}

const DUCK_TYPES: Record<ColumnType, DuckDBType> = { VARCHAR, BIGINT, DOUBLE, BOOLEAN };

/** DuckDB's vector size: the most rows one data chunk holds. */
const CHUNK_ROWS = 2048;

function duckValue(type: ColumnType, v: unknown, table: string, col: string): DuckDBValue {
  if (v === null || v === undefined) return null;
  const ok = type === "VARCHAR"
    ? typeof v === "string"
    : type === "BIGINT"
    ? Number.isSafeInteger(v)
    : type === "DOUBLE"
    ? typeof v === "number"
    : typeof v === "boolean";
  if (!ok) throw new ProjectionRowError(table, col, v);
  return type === "BIGINT" ? BigInt(v as number) : v as DuckDBValue;
}

/**
 * Appends buffered rows to their base tables through DuckDB's appender, a column-major data
 * chunk of up to 2048 rows at a time: numbers are written into typed arrays and copied once per
 * chunk, rather than crossing into native code once per value. Runs inside the caller's
 * transaction.
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
    const columns = TABLES[name].columns;
    const types = columns.map(([, t]) => DUCK_TYPES[t]);
    const appender = await conn.createAppender(name);
    try {
      for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
        const count = Math.min(CHUNK_ROWS, rows.length - start);
        const chunk = DuckDBDataChunk.create(types, count);
        for (let c = 0; c < columns.length; c++) {
          const [col, type] = columns[c];
          const vector = chunk.getColumnVector(c);
          for (let r = 0; r < count; r++) {
            vector.setItem(r, duckValue(type, rows[start + r][c], name, col));
          }
          vector.flush();
        }
        appender.appendDataChunk(chunk);
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  }
}
