/**
 * Value conversion between Kysely's JS values and DuckDB's. DuckDB returns BIGINT and HUGEINT
 * (count(*), sum of integers) as JS bigint; Kysely users expect numbers, and a silent Number()
 * would lose digits past 2^53, so the "number" mode converts and fails loudly past that range.
 */
import { blobValue, type DuckDBValue, listValue, timestampTZValue } from "@duckdb/node-api";

/** How BIGINT/HUGEINT results reach TypeScript: checked numbers, or bigint as DuckDB gives. */
export type BigintMode = "number" | "bigint";

/** A 64/128-bit integer result outside JavaScript's exact integer range in "number" mode. */
export class UnsafeIntegerError extends Error {
  override name = "UnsafeIntegerError";
  constructor(readonly column: string, readonly value: bigint) {
    super(
      `column ${column}: ${value} is outside Number's exact integer range; ` +
        `open the dialect with bigint: "bigint" or cast the column to DOUBLE`,
    );
  }
}

function toNumber(column: string, value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new UnsafeIntegerError(column, value);
  }
  return Number(value);
}

function convertOut(column: string, value: unknown): unknown {
  if (typeof value === "bigint") return toNumber(column, value);
  if (Array.isArray(value)) return value.map((v) => convertOut(column, v));
  if (value !== null && typeof value === "object" && value.constructor === Object) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, convertOut(`${column}.${k}`, v)]),
    );
  }
  return value;
}

/**
 * Converts result rows (from `getRowObjectsJS`) for the chosen bigint mode.
 *
 * @example
 * ```ts
 * convertRows([{ n: 3n }], "number"); // [{ n: 3 }]
 * ```
 */
export function convertRows<R>(rows: Record<string, unknown>[], mode: BigintMode): R[] {
  if (mode === "bigint") return rows as R[];
  return rows.map((row) => {
    const out: Record<string, unknown> = {};
    for (const key in row) out[key] = convertOut(key, row[key]);
    return out as R;
  });
}

/**
 * Converts a Kysely parameter to a DuckDB value: Dates become TIMESTAMPTZ (microseconds),
 * byte arrays BLOBs, JS arrays LISTs; scalars pass through with DuckDB's own type inference.
 *
 * @example
 * ```ts
 * toDuckDBValue(new Date(0)); // TIMESTAMPTZ 1970-01-01
 * ```
 */
export function toDuckDBValue(value: unknown): DuckDBValue {
  if (value === undefined || value === null) return null;
  if (value instanceof Date) return timestampTZValue(BigInt(value.getTime()) * 1000n);
  if (value instanceof Uint8Array) return blobValue(value);
  if (Array.isArray(value)) return listValue(value.map(toDuckDBValue));
  return value as DuckDBValue;
}
