import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  type DuckDBConnection,
  DuckDBDataChunk,
  type DuckDBType,
  VARCHAR,
} from "@duckdb/node-api";
import duckdb from "@duckdb/node-bindings";
import type { ColumnType } from "./define-table.ts";
import { type TableName, TABLES } from "./tables.ts";

/** A value that does not fit its column: names the table, column and value. */
export class ProjectionRowError extends Error {
  override name = "ProjectionRowError";
  constructor(readonly table: string, readonly column: string, readonly value: unknown) {
    super(`cannot write ${String(value)} to ${table}.${column}: wrong type for the column`);
  }
}

const DUCK_TYPES: Record<ColumnType, DuckDBType> = { VARCHAR, BIGINT, DOUBLE, BOOLEAN };

/** Bytes one value of each type takes in a vector (a VARCHAR is a 16-byte `duckdb_string_t`). */
const WIDTH: Record<ColumnType, number> = { VARCHAR: 16, BIGINT: 8, DOUBLE: 8, BOOLEAN: 1 };

/** DuckDB's vector size: the most rows one data chunk holds. */
const CHUNK_ROWS = 2048;

/** Longest string a `duckdb_string_t` holds inline, in bytes. */
const INLINE_BYTES = 12;

const TWO_32 = 2 ** 32;

// One column of one chunk is built here, then copied into the vector in one call. The layout is
// DuckDB's C API vector layout on a little-endian host (every platform its npm builds ship for).
const scratch = new ArrayBuffer(CHUNK_ROWS * WIDTH.VARCHAR);
const bytes = new Uint8Array(scratch);
const words = new Uint32Array(scratch);
const doubles = new Float64Array(scratch);
/** One bit per row, set when the value is not null (a vector's validity mask). */
const validity = new Uint8Array(CHUNK_ROWS / 8);

function fits(type: ColumnType, v: unknown): boolean {
  return type === "VARCHAR"
    ? typeof v === "string"
    : type === "BIGINT"
    ? Number.isSafeInteger(v)
    : type === "DOUBLE"
    ? typeof v === "number"
    : typeof v === "boolean";
}

/**
 * Writes `s` inline into row `r`'s `duckdb_string_t` (length, then the bytes, zero padded) when
 * it is ASCII of at most 12 bytes; returns false otherwise, leaving the slot zeroed.
 */
function inlineString(s: string, r: number): boolean {
  if (s.length > INLINE_BYTES) return false;
  const at = r * WIDTH.VARCHAR;
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    if (code > 0x7f) {
      bytes.fill(0, at + 4, at + 4 + i);
      return false;
    }
    bytes[at + 4 + i] = code;
  }
  words[at / 4] = s.length;
  return true;
}

/**
 * Fills one column vector of a chunk with `count` rows' values. Numbers and short strings are
 * written into scratch memory and copied with one native call; only strings too long to inline
 * (or not ASCII) cross into native code one by one: a call per value cost more than DuckDB's
 * whole append of it.
 */
function writeColumn(
  vector: duckdb.Vector,
  [table, column, type]: readonly [string, string, ColumnType],
  values: (r: number) => unknown,
  count: number,
): void {
  const width = WIDTH[type];
  bytes.fill(0, 0, count * width);
  validity.fill(0xff);
  let nulls = false;
  const assigned: number[] = [];
  for (let r = 0; r < count; r++) {
    const v = values(r);
    if (v === null || v === undefined) {
      validity[r >> 3] &= ~(1 << (r & 7));
      nulls = true;
      continue;
    }
    if (!fits(type, v)) throw new ProjectionRowError(table, column, v);
    if (type === "VARCHAR") {
      if (!inlineString(v as string, r)) assigned.push(r);
    } else if (type === "BIGINT") {
      // Two's-complement halves of a safe integer, low word first: no BigInt per value.
      const high = Math.floor((v as number) / TWO_32);
      words[2 * r] = (v as number) - high * TWO_32;
      words[2 * r + 1] = high;
    } else if (type === "DOUBLE") {
      doubles[r] = v as number;
    } else {
      bytes[r] = v ? 1 : 0;
    }
  }
  duckdb.copy_data_to_vector(vector, 0, scratch, 0, count * width);
  for (const r of assigned) duckdb.vector_assign_string_element(vector, r, values(r) as string);
  if (nulls) {
    duckdb.vector_ensure_validity_writable(vector);
    duckdb.copy_data_to_vector_validity(vector, 0, validity.buffer, 0, Math.ceil(count / 64) * 8);
  }
}

/**
 * Appends buffered rows to their base tables through DuckDB's appender, a column-major data
 * chunk of up to 2048 rows at a time, each column copied into its vector in one native call.
 * Runs inside the caller's transaction. Throws ProjectionRowError for a value of the wrong type.
 *
 * @example
 * ```ts
 * import type { DuckDBConnection } from "@duckdb/node-api";
 * import { appendRows } from "./append-rows.ts";
 * declare const conn: DuckDBConnection;
 *
 * await appendRows(conn, new Map([["steps", [["run-1", 0, 8, 2, 5, 0]]]]));
 * ```
 */
export async function appendRows(
  conn: DuckDBConnection,
  buffers: ReadonlyMap<TableName, readonly (readonly unknown[])[]>,
): Promise<void> {
  for (const [name, rows] of buffers) {
    if (rows.length === 0) continue;
    const columns = TABLES[name].columnList;
    const types = columns.map(([, c]) => DUCK_TYPES[c.type]);
    const appender = await conn.createAppender(name);
    try {
      for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
        const count = Math.min(CHUNK_ROWS, rows.length - start);
        const chunk = DuckDBDataChunk.create(types, count);
        for (let c = 0; c < columns.length; c++) {
          const [column, { type }] = columns[c];
          writeColumn(
            duckdb.data_chunk_get_vector(chunk.chunk, c),
            [name, column, type],
            (r) => rows[start + r][c],
            count,
          );
        }
        appender.appendDataChunk(chunk);
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  }
}
