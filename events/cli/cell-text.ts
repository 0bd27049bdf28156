/**
 * How one result value prints in a text cell: null as empty, Dates in ISO-8601 UTC, bigints and
 * numbers in full, nested values as JSON (bigints inside as strings, JSON has none).
 *
 * @example
 * ```ts
 * import { cellText } from "./cell-text.ts";
 *
 * cellText(new Date(0)); // "1970-01-01T00:00:00.000Z"
 * ```
 */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "object") {
    return JSON.stringify(value, (_k, v) => typeof v === "bigint" ? v.toString() : v);
  }
  return String(value);
}
