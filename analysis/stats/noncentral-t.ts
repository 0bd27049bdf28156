/**
 * The noncentral t distribution's CDF, which gives the exact power of a t-test (the statistic is
 * noncentral t under the alternative), as statsmodels' TTestIndPower and G*Power compute it.
 *
 * No pinned, well-kept npm library computes it: @stdlib has only the central t, and jStat's
 * `noncentralt.cdf` stops when two successive terms fall below 1e-14 (a rule on term size, not a
 * bound on the remaining sum) over its own incomplete beta. This follows Lenth's algorithm
 * AS 243 as R's nmath/pnt.c implements it (R 2.4+; read for this file): the twin Poisson-weighted
 * series of regularized incomplete beta functions (Guenther 1978), stopped when the bound
 * `2 s (xodd - godd)` on the remaining terms is below 1e-12, with Φ(-δ) added at the end, the
 * negative half-line by reflection `F(t; ν, δ) = 1 - F(-t; ν, -δ)`, and Abramowitz & Stegun
 * 26.7.10 for ν > 4e5 or δ² beyond exp's range. The incomplete beta, log-gamma and erfc are
 * @stdlib's (ports of Boost/Cephes), so the starting terms carry full double precision.
 */
import betainc from "@stdlib/math-base-special-betainc";
import erfc from "@stdlib/math-base-special-erfc";
import gammaln from "@stdlib/math-base-special-gammaln";
import { StatsInputError } from "./stats-input-error.ts";
import { tCdfAt } from "./student-t.ts";

const ITERATIONS = 1000;
const MAX_ERROR = 1e-12;
/** δ² above this underflows exp(-δ²/2) (R: 2 ln 2 · -DBL_MIN_EXP). */
const MAX_LAMBDA = 2 * Math.LN2 * 1021;
const LN_SQRT_PI = 0.5 * Math.log(Math.PI);
const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

/** Standard normal CDF at x with mean `mu` and sd `sigma`, from erfc (no cancellation). */
function normalCdf(x: number, mu = 0, sigma = 1): number {
  return 0.5 * erfc(-(x - mu) / (sigma * Math.SQRT2));
}

/**
 * `P(T <= t)` for T noncentral t with `df` degrees of freedom (any real > 0) and noncentrality
 * `nc`. Absolute error about 1e-12 (the series' stopping bound); for tail probabilities far below
 * that, use the other tail.
 *
 * @example
 * ```ts
 * noncentralTCdf(2, 10, 1); // 0.8163... (scipy.stats.nct.cdf(2, 10, 1))
 * ```
 */
export function noncentralTCdf(t: number, df: number, nc: number): number {
  if (!(df > 0)) throw new StatsInputError("df", df, "degrees of freedom must be > 0");
  if (!Number.isFinite(nc)) throw new StatsInputError("nc", nc, "noncentrality must be finite");
  if (Number.isNaN(t)) return NaN;
  if (nc === 0) return tCdfAt(t, df);
  if (!Number.isFinite(t)) return t < 0 ? 0 : 1;
  // The series runs on t >= 0; the lower half-line is the reflected upper tail.
  const reflected = t < 0;
  if (reflected && nc > 40) return 0; // F(t) <= F(0) = Φ(-nc) underflows
  const tt = Math.abs(t);
  const del = reflected ? -nc : nc;
  const lower = (tail: number) => (reflected ? 1 - tail : tail);
  if (df > 4e5 || del * del > MAX_LAMBDA) {
    const s = 1 / (4 * df);
    return lower(normalCdf(tt * (1 - s), del, Math.sqrt(1 + tt * tt * 2 * s)));
  }
  let tnc = 0;
  const x = (tt * tt) / (tt * tt + df);
  if (x > 0) {
    const lambda = del * del;
    let p = 0.5 * Math.exp(-0.5 * lambda);
    let q = SQRT_2_OVER_PI * p * del;
    let s = 0.5 - p;
    if (s < 1e-7) s = -0.5 * Math.expm1(-0.5 * lambda);
    let a = 0.5;
    const b = 0.5 * df;
    const rxb = Math.pow(df / (tt * tt + df), b);
    const lnBeta = LN_SQRT_PI + gammaln(b) - gammaln(0.5 + b);
    let xodd = betainc(x, a, b);
    let godd = 2 * rxb * Math.exp(a * Math.log(x) - lnBeta);
    let xeven = b * x < Number.EPSILON ? b * x : 1 - rxb;
    let geven = b * x * rxb;
    tnc = p * xodd + q * xeven;
    for (let it = 1; it <= ITERATIONS; it++) {
      a += 1;
      xodd -= godd;
      xeven -= geven;
      godd *= (x * (a + b - 1)) / a;
      geven *= (x * (a + b - 0.5)) / (a + 0.5);
      p *= lambda / (2 * it);
      q *= lambda / (2 * it + 1);
      tnc += p * xodd + q * xeven;
      s -= p;
      // s < 0 is rounding (every Poisson weight used up); the sum is as good as it gets.
      if (s < -1e-10 || (s <= 0 && it > 1)) break;
      if (Math.abs(2 * s * (xodd - godd)) < MAX_ERROR) break;
    }
  }
  tnc += normalCdf(-del);
  return lower(Math.min(tnc, 1));
}
