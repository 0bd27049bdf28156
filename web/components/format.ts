/**
 * A number for tables: 4 significant digits, "NaN"/"∞" spelled out, "—" for missing.
 *
 * @example
 * ```ts
 * formatNumber(0.123456); // "0.1235"
 * ```
 */
export function formatNumber(x: number | null | undefined, digits = 4): string {
  if (x === null || x === undefined) return "—";
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "∞" : "-∞";
  if (Number.isInteger(x)) return String(x);
  return Number(x.toPrecision(digits)).toString();
}

/**
 * A query result's cell as text: NULL spelled out, numbers at 6 significant digits, structs and
 * lists as JSON.
 *
 * @example
 * ```ts
 * formatCell(null); // "NULL"
 * ```
 */
export function formatCell(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "number") return formatNumber(v, 6);
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}
