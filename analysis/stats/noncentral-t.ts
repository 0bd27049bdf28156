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
 * 26.7.10 for ν > 4e5. Where δ² is beyond exp's range (|δ| > 37.6), the weight exp(-δ²/2) of the
 * series' first term underflows; R switches to A&S 26.7.10 there, which is off by up to 0.05 at
 * few degrees of freedom (ν = 1, δ = 38: F(12.7) = 0.0008 against 0.0029). Here the same series
 * is summed from its largest Poisson weight outwards, both ways, as Boost's non_central_t does
 * (the paired test of 2 seeds has ν = 1). The incomplete beta, log-gamma and erfc are @stdlib's
 * (ports of Boost/Cephes), so the starting terms carry full double precision.
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
 * The series Σ_j p_j I_x(j + 1/2, b) + q_j I_x(j + 1, b) of AS 243 (p_j, q_j the Poisson weights
 * of λ/2 = δ²/2 with δ's sign in q_j), summed from the largest weight j = ⌊λ/2⌋ forwards and
 * backwards with the incomplete beta recurrences, each way until its terms fall below 1e-16 of
 * the sum: for λ whose first weight exp(-λ/2) underflows.
 */
function seriesFromMode(x: number, b: number, del: number, lambda: number): number {
  const half = lambda / 2;
  const k = Math.floor(half);
  const lnX = Math.log(x);
  const ln1mX = Math.log1p(-x);
  const lnDel = Math.log(Math.abs(del));
  const sign = Math.sign(del);
  // p_j = exp(-λ/2) (λ/2)^j / (2 j!), q_j = δ exp(-λ/2) (λ/2)^j / (2 √2 Γ(j + 3/2)).
  const lnWeight = -half + k * Math.log(half) - Math.LN2;
  const p0 = Math.exp(lnWeight - gammaln(k + 1));
  const q0 = sign * Math.exp(lnWeight + lnDel - 0.5 * Math.LN2 - gammaln(k + 1.5));
  // g(a) = x^a (1 - x)^b / (a B(a, b)): I_x(a + 1, b) = I_x(a, b) - g(a).
  const g = (a: number) =>
    Math.exp(a * lnX + b * ln1mX - Math.log(a) - (gammaln(a) + gammaln(b) - gammaln(a + b)));
  const odd0 = betainc(x, k + 0.5, b);
  const even0 = betainc(x, k + 1, b);
  let sum = p0 * odd0 + q0 * even0;
  // Forwards from the mode.
  let [p, q, xodd, xeven] = [p0, q0, odd0, even0];
  let [godd, geven] = [g(k + 0.5), g(k + 1)];
  for (let j = k + 1; j <= k + forwardTerms(half); j++) {
    xodd -= godd;
    xeven -= geven;
    const [a, a1] = [j - 0.5, j]; // the previous a of each series
    godd *= (x * (a + b)) / (a + 1);
    geven *= (x * (a1 + b)) / (a1 + 1);
    p *= half / j;
    q *= lambda / (2 * j + 1);
    const term = p * Math.max(xodd, 0) + q * Math.max(xeven, 0);
    sum += term;
    if (Math.abs(term) < 1e-16 * Math.abs(sum) && p < 1e-16) break;
  }
  // Backwards: I_x(a, b) = I_x(a + 1, b) + g(a), g(a) = g(a + 1) (a + 1) / (x (a + b)).
  [p, q, xodd, xeven] = [p0, q0, odd0, even0];
  [godd, geven] = [g(k + 0.5), g(k + 1)];
  for (let j = k - 1; j >= 0; j--) {
    godd *= (j + 1.5) / (x * (j + 0.5 + b));
    geven *= (j + 2) / (x * (j + 1 + b));
    xodd += godd;
    xeven += geven;
    p *= (j + 1) / half;
    q *= (2 * j + 3) / lambda;
    const term = p * Math.min(xodd, 1) + q * Math.min(xeven, 1);
    sum += term;
    if (Math.abs(term) < 1e-16 * Math.abs(sum) && p < 1e-16) break;
  }
  return sum;
}

/** Forward terms from the mode: the Poisson weights fall below 1e-16 within ~9 sd of it. */
function forwardTerms(half: number): number {
  return Math.ceil(20 * Math.sqrt(half)) + ITERATIONS;
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
  if (df > 4e5) {
    const s = 1 / (4 * df);
    return lower(normalCdf(tt * (1 - s), del, Math.sqrt(1 + tt * tt * 2 * s)));
  }
  let tnc = 0;
  const x = (tt * tt) / (tt * tt + df);
  if (x > 0 && del * del > MAX_LAMBDA) {
    tnc = seriesFromMode(x, 0.5 * df, del, del * del);
  } else if (x > 0) {
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
