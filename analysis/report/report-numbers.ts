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

/** A plain figure with up to 4 significant digits, "n/a" for null/NaN. */
export function figure(x: number | null): string {
  if (x === null || Number.isNaN(x)) return "n/a";
  if (!Number.isFinite(x)) return String(x);
  return Math.abs(x) >= 1e5 || (x !== 0 && Math.abs(x) < 1e-3)
    ? x.toExponential(3)
    : String(Number(x.toPrecision(4)));
}
