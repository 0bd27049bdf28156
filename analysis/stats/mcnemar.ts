/**
 * McNemar's exact test: two conditions graded on the same items, one right/wrong outcome each.
 * Only the discordant items carry information (right in one condition, wrong in the other);
 * under the null hypothesis of equal accuracy each discordant item falls either way with
 * probability 1/2, so the count one way is binomial(discordant, 1/2).
 */
import betainc from "@stdlib/math-base-special-betainc";
import { requireCount } from "./stats-input-error.ts";

export interface McNemarResult {
  readonly kind: "mcnemar";
  /** Items right in condition A and wrong in B. */
  readonly aOnly: number;
  /** Items wrong in A and right in B. */
  readonly bOnly: number;
  /** Two-sided exact p-value; 1 when no item is discordant (nothing tells the two apart). */
  readonly p: number;
}

/**
 * The exact (binomial) McNemar test, as `scipy.stats.binomtest(aOnly, aOnly + bOnly, 0.5)`: the
 * binomial at 1/2 is symmetric, so the two-sided p is twice the smaller tail, at most 1. With no
 * discordant item the p-value is 1 (as statsmodels' `mcnemar(exact=True)`; scipy refuses n = 0).
 * The tail `P(X <= m)` of binomial(n, 1/2) is the regularized incomplete beta `I_1/2(n - m, m + 1)`
 * (@stdlib's, a port of Boost's), which keeps its digits for benchmarks of thousands of problems,
 * where the binomial coefficients overflow a double.
 *
 * @example
 * ```ts
 * mcnemarExact(7, 1).p; // 0.0703125 = 2 * (1 + 8) / 2^8
 * ```
 */
export function mcnemarExact(aOnly: number, bOnly: number): McNemarResult {
  requireCount("aOnly", aOnly);
  requireCount("bOnly", bOnly);
  const n = aOnly + bOnly;
  const fewer = Math.min(aOnly, bOnly);
  const p = 2 * fewer >= n ? 1 : Math.min(1, 2 * betainc(0.5, n - fewer, fewer + 1));
  return Object.freeze({ kind: "mcnemar", aOnly, bOnly, p });
}
