/**
 * Exact power of t-tests from the noncentral t distribution, and the quantities solved from it:
 * the minimum detectable effect at given sizes and the sizes that detect a given effect. The
 * statistic of a test at level α is compared with Student's t critical values; under the
 * alternative it is noncentral t with the test's degrees of freedom and noncentrality
 * nc = effect / (standard error of the estimate), as statsmodels' `ttest_power` computes it
 * (statsmodels/stats/power.py: `nct._sf(crit_upp) + nct._cdf(crit_low)`).
 *
 * Welch's test has no exact noncentral t law (its df is itself random); the planned-variance
 * approximation used here (nc = δ / sqrt(s1²/n1 + s2²/n2), df = Welch–Satterthwaite of the
 * planned variances) equals statsmodels' `TTestIndPower.power(effect, n1, alpha, ratio, df)` at
 * that df, and is exact in the pooled case s1 = s2, n1 = n2.
 */
import { noncentralTCdf } from "./noncentral-t.ts";
import { StatsInputError } from "./stats-input-error.ts";
import { tQuantileAt } from "./student-t.ts";

/** Which way the test rejects. */
export type Alternative = "two-sided" | "larger" | "smaller";

/**
 * Power of a t-test whose statistic is noncentral t(`df`, `nc`) under the alternative.
 *
 * @example
 * ```ts
 * tTestPower(2.5, 18, 0.05); // 0.6573...
 * ```
 */
export function tTestPower(
  nc: number,
  df: number,
  alpha: number,
  alternative: Alternative = "two-sided",
): number {
  if (!(alpha > 0 && alpha < 1)) throw new StatsInputError("alpha", alpha, "must lie in (0, 1)");
  const tail = alternative === "two-sided" ? alpha / 2 : alpha;
  let power = 0;
  if (alternative !== "smaller") power += 1 - noncentralTCdf(tQuantileAt(1 - tail, df), df, nc);
  if (alternative !== "larger") power += noncentralTCdf(tQuantileAt(tail, df), df, nc);
  return power;
}

/** A two-sample design: each group's planned standard deviation and size. */
export interface TwoSampleDesign {
  readonly sd1: number;
  readonly n1: number;
  readonly sd2: number;
  readonly n2: number;
}

function checkDesign(d: TwoSampleDesign): void {
  for (const [key, n] of [["n1", d.n1], ["n2", d.n2]] as const) {
    if (!(n >= 2)) throw new StatsInputError(key, n, "a t-test needs at least 2 per group");
  }
  for (const [key, sd] of [["sd1", d.sd1], ["sd2", d.sd2]] as const) {
    if (!(sd >= 0 && Number.isFinite(sd))) throw new StatsInputError(key, sd, "must be >= 0");
  }
  if (d.sd1 === 0 && d.sd2 === 0) {
    throw new StatsInputError("sd1, sd2", 0, "both groups without spread: power is undefined");
  }
}

/** Standard error of the difference of means and Welch–Satterthwaite df of a design. */
export function welchDesign(d: TwoSampleDesign): { readonly se: number; readonly df: number } {
  checkDesign(d);
  const v1 = d.sd1 ** 2 / d.n1;
  const v2 = d.sd2 ** 2 / d.n2;
  const df = (v1 + v2) ** 2 / (v1 ** 2 / (d.n1 - 1) + v2 ** 2 / (d.n2 - 1));
  return { se: Math.sqrt(v1 + v2), df };
}

/**
 * Power of Welch's two-sided test to detect a difference of means `delta`.
 *
 * @example
 * ```ts
 * welchPower(0.05, { sd1: 0.03, n1: 5, sd2: 0.03, n2: 5 }, 0.05); // 0.6378...
 * ```
 */
export function welchPower(
  delta: number,
  design: TwoSampleDesign,
  alpha: number,
  alternative: Alternative = "two-sided",
): number {
  const { se, df } = welchDesign(design);
  return tTestPower(delta / se, df, alpha, alternative);
}

/**
 * Power of the pooled two-sample t-test for a standardized effect (Cohen's d), as statsmodels'
 * `TTestIndPower().power(d, n1, alpha, ratio = n2 / n1)` and G*Power compute it.
 *
 * @example
 * ```ts
 * pooledPower(0.5, 64, 64, 0.05); // 0.8014...
 * ```
 */
export function pooledPower(
  d: number,
  n1: number,
  n2: number,
  alpha: number,
  alternative: Alternative = "two-sided",
): number {
  checkDesign({ sd1: 1, n1, sd2: 1, n2 });
  return tTestPower(d * Math.sqrt((n1 * n2) / (n1 + n2)), n1 + n2 - 2, alpha, alternative);
}

/**
 * Power of the one-sample t-test for a standardized effect (statsmodels' `TTestPower`).
 *
 * @example
 * ```ts
 * oneSamplePower(0.5, 34, 0.05); // 0.8077...
 * ```
 */
export function oneSamplePower(
  d: number,
  n: number,
  alpha: number,
  alternative: Alternative = "two-sided",
): number {
  if (!(n >= 2)) throw new StatsInputError("n", n, "a t-test needs at least 2 values");
  return tTestPower(d * Math.sqrt(n), n - 1, alpha, alternative);
}

/**
 * The x in [lo, hi] where the increasing function `f` reaches `target`, by bisection to the
 * last representable digit (monotone power curves have one crossing; bisection cannot overshoot).
 */
export function solveIncreasing(
  f: (x: number) => number,
  target: number,
  lo: number,
  hi: number,
): number {
  if (f(lo) >= target) return lo;
  let upper = hi;
  while (f(upper) < target) {
    upper *= 2;
    if (!Number.isFinite(upper)) {
      throw new StatsInputError("target", target, "not reached on the half-line");
    }
  }
  let lower = lo;
  for (let i = 0; i < 200; i++) {
    const mid = 0.5 * (lower + upper);
    if (mid <= lower || mid >= upper) break;
    if (f(mid) < target) lower = mid;
    else upper = mid;
  }
  return 0.5 * (lower + upper);
}

function checkPower(power: number, alpha: number): void {
  if (!(power > alpha && power < 1)) {
    throw new StatsInputError("power", power, `must lie in (alpha = ${alpha}, 1)`);
  }
}

/**
 * The minimum detectable difference of Welch's two-sided test: the smallest |delta| that it
 * detects with probability `power` at level `alpha`.
 *
 * @example
 * ```ts
 * welchMde({ sd1: 0.03, n1: 5, sd2: 0.03, n2: 5 }, 0.05, 0.8); // 0.0607...
 * ```
 */
export function welchMde(design: TwoSampleDesign, alpha: number, power: number): number {
  const { se, df } = welchDesign(design);
  return se * detectableNoncentrality(df, alpha, power);
}

/**
 * The noncentrality at which a two-sided t-test with `df` degrees of freedom reaches `power`:
 * the minimum detectable effect in standard errors.
 *
 * @example
 * ```ts
 * detectableNoncentrality(1e6, 0.05, 0.8); // 2.8016... (z_0.975 + z_0.8, the normal limit)
 * ```
 */
export function detectableNoncentrality(df: number, alpha: number, power: number): number {
  checkPower(power, alpha);
  return solveIncreasing((nc) => tTestPower(nc, df, alpha), power, 0, 8);
}

/**
 * The minimum detectable |mean - mu0| of the two-sided one-sample t-test over `n` values of
 * standard deviation `sd`.
 *
 * @example
 * ```ts
 * oneSampleMde(0.03, 5, 0.05, 0.8); // 0.0504...
 * ```
 */
export function oneSampleMde(sd: number, n: number, alpha: number, power: number): number {
  if (!(n >= 2)) throw new StatsInputError("n", n, "a t-test needs at least 2 values");
  return (sd / Math.sqrt(n)) * detectableNoncentrality(n - 1, alpha, power);
}

/**
 * The smallest n at which the two-sided one-sample t-test detects |mean - mu0| = `delta` over
 * values of standard deviation `sd` with `power`; null above `max`.
 *
 * @example
 * ```ts
 * oneSampleSeeds(0.05, 0.03, 0.05, 0.8); // 6
 * ```
 */
export function oneSampleSeeds(
  delta: number,
  sd: number,
  alpha: number,
  power: number,
  max = 100_000,
): number | null {
  checkPower(power, alpha);
  return smallestSize((n) => tTestPower(delta / (sd / Math.sqrt(n)), n - 1, alpha) >= power, max);
}

/** The smallest integer n in [2, max] where the monotone `reaches(n)` holds; null if none. */
function smallestSize(reaches: (n: number) => boolean, max: number): number | null {
  if (!reaches(max)) return null;
  let lo = 1; // a t-test needs 2
  let hi = max;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (mid >= 2 && reaches(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

/**
 * The standardized effect (Cohen's d) the pooled two-sample test detects with `power`.
 *
 * @example
 * ```ts
 * pooledMde(64, 64, 0.05, 0.8); // 0.4991...
 * ```
 */
export function pooledMde(n1: number, n2: number, alpha: number, power: number): number {
  checkPower(power, alpha);
  return solveIncreasing((d) => pooledPower(d, n1, n2, alpha), power, 0, 4);
}

/**
 * The (real) group size n1, with n2 = ratio · n1, at which the pooled test reaches `power` for
 * the standardized effect `d` (statsmodels' `solve_power(nobs1=None)`; round up for a plan).
 *
 * @example
 * ```ts
 * pooledSize(0.5, 0.05, 0.8); // 63.765...
 * ```
 */
export function pooledSize(d: number, alpha: number, power: number, ratio = 1): number {
  checkPower(power, alpha);
  if (!(d !== 0 && Number.isFinite(d))) throw new StatsInputError("d", d, "must be nonzero");
  if (!(ratio > 0)) throw new StatsInputError("ratio", ratio, "must be > 0");
  // n1 >= 2 and n2 = ratio · n1 >= 2 keep both variances defined.
  const least = Math.max(2, 2 / ratio);
  return solveIncreasing((n) => pooledPower(d, n, ratio * n, alpha), power, least, 64);
}

/**
 * The smallest equal number of values per group (seeds per cell) at which Welch's two-sided test
 * detects `delta` with `power`, given each group's standard deviation; null above `max`.
 *
 * @example
 * ```ts
 * welchSeeds(0.05, 0.03, 0.03, 0.05, 0.8); // 7
 * ```
 */
export function welchSeeds(
  delta: number,
  sd1: number,
  sd2: number,
  alpha: number,
  power: number,
  max = 100_000,
): number | null {
  checkPower(power, alpha);
  return smallestSize(
    (n) => welchPower(delta, { sd1, n1: n, sd2, n2: n }, alpha) >= power,
    max,
  );
}
