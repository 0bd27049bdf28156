import { StatsInputError } from "./stats-input-error.ts";

/**
 * Quantile with linear interpolation between order statistics (Hyndman–Fan type 7: numpy's
 * default and DuckDB's `quantile_cont`), so TypeScript and SQL figures agree.
 *
 * @example
 * ```ts
 * quantile([1, 2, 3, 4], 0.5); // 2.5
 * ```
 */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) throw new StatsInputError("values", "[]", "need at least one value");
  if (!(q >= 0 && q <= 1)) throw new StatsInputError("q", q, "must lie in [0, 1]");
  const sorted = [...xs].sort((a, b) => a - b);
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}
