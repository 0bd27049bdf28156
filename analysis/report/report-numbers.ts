/** Number formats of the rendered report: accuracy in percentage points, p-values as papers do. */

/** A fraction as percentage points with 2 decimals: 0.4190 -> "41.90". */
export function points(x: number): string {
  return Number.isFinite(x) ? (100 * x).toFixed(2) : String(x);
}

/** A signed difference in points: "+2.00", "-0.35". */
export function signedPoints(x: number): string {
  return Number.isFinite(x) ? `${x >= 0 ? "+" : "-"}${Math.abs(100 * x).toFixed(2)}` : String(x);
}

/** A p-value: "<0.001" below 1e-3, else 3 decimals; "n/a" when undefined. */
export function pValue(p: number | undefined): string {
  if (p === undefined || Number.isNaN(p)) return "n/a";
  return p < 0.001 ? "<0.001" : p.toFixed(3);
}

/**
 * A measured real value (a gradient norm, a t statistic, a mean over questions) with up to 4
 * significant digits, "n/a" for null/NaN. Counts go through {@link count}: rounding 43008
 * parameters to "43010" would misstate an exact number.
 */
export function figure(x: number | null): string {
  if (x === null || Number.isNaN(x)) return "n/a";
  if (!Number.isFinite(x)) return String(x);
  return Math.abs(x) >= 1e5 || (x !== 0 && Math.abs(x) < 1e-3)
    ? x.toExponential(3)
    : String(Number(x.toPrecision(4)));
}

/**
 * A count (parameters, tokens, steps, episodes) with every digit: 43008 -> "43008", "n/a" for
 * null/NaN. A mean of counts over runs that is not whole shows to the nearest whole count.
 */
export function count(x: number | null): string {
  if (x === null || Number.isNaN(x)) return "n/a";
  return String(Math.round(x));
}
