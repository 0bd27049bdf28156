/**
 * Student's t distribution, taken from @stdlib (regularized incomplete beta ported from Boost),
 * so the tails are accurate to near machine precision; a hand-rolled series would not be.
 */
import tCdf from "@stdlib/stats-base-dists-t-cdf";
import tQuantile from "@stdlib/stats-base-dists-t-quantile";
import { StatsInputError } from "./stats-input-error.ts";

function requireDf(df: number): void {
  if (!(df > 0)) throw new StatsInputError("df", df, "degrees of freedom must be > 0");
}

/**
 * Two-sided p-value of a t statistic: `P(|T| >= |t|)`, computed from the lower tail so small
 * p-values keep their digits.
 *
 * @example
 * ```ts
 * twoSidedP(0, 10); // 1
 * ```
 */
export function twoSidedP(t: number, df: number): number {
  requireDf(df);
  if (Number.isNaN(t)) return NaN;
  return Math.min(1, 2 * tCdf(-Math.abs(t), df));
}

/**
 * CDF of Student's t: `P(T <= t)`.
 *
 * @example
 * ```ts
 * tCdfAt(0, 5); // 0.5
 * ```
 */
export function tCdfAt(t: number, df: number): number {
  requireDf(df);
  return tCdf(t, df);
}

/**
 * Quantile of Student's t: the x with `P(T <= x) = p`.
 *
 * @example
 * ```ts
 * tQuantileAt(0.975, 1e9); // 1.959963984...
 * ```
 */
export function tQuantileAt(p: number, df: number): number {
  requireDf(df);
  if (!(p > 0 && p < 1)) throw new StatsInputError("p", p, "probability must lie in (0, 1)");
  return tQuantile(p, df);
}

/** A t-test of a difference: the fields Welch's and the paired test share. */
export interface TTest {
  /** The difference tested (mean(a) - mean(b), or mean(a - b)). */
  readonly diff: number;
  /** Standard error of the difference. */
  readonly se: number;
  readonly df: number;
  readonly t: number;
  /** Two-sided p-value. */
  readonly p: number;
  /** Confidence interval of the difference at `level`. */
  readonly ci: readonly [number, number];
  readonly level: number;
}

/**
 * t = diff / se with its two-sided p and the interval diff ± t_{(1+level)/2, df} * se, which
 * collapses to the difference when se is 0.
 *
 * @example
 * ```ts
 * import { tTest } from "./student-t.ts";
 *
 * tTest(2, 0.5, 18, 0.95).p; // 0.00084 (t = 4)
 * ```
 */
export function tTest(diff: number, se: number, df: number, level: number): TTest {
  const t = diff / se;
  const half = se === 0 ? 0 : tQuantileAt(1 - (1 - level) / 2, df) * se;
  return {
    diff,
    se,
    df,
    t,
    p: twoSidedP(t, df),
    ci: Object.freeze([diff - half, diff + half]) as readonly [number, number],
    level,
  };
}
