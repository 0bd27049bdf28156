import { requireCount, StatsInputError } from "./stats-input-error.ts";

/**
 * Unbiased pass@k (Chen et al. 2021): the chance that at least one of k samples drawn without
 * replacement from n, of which c are correct, is correct: `1 - C(n-c, k) / C(n, k)`.
 *
 * The binomials overflow for n in the hundreds, so the ratio is taken as the product
 * `prod_{i=n-c+1..n} (1 - k / i)`, each factor in [0, 1], which never overflows.
 *
 * @example
 * ```ts
 * passAtK(16, 1, 1); // 0.0625
 * passAtK(16, 1, 16); // 1
 * ```
 */
export function passAtK(n: number, c: number, k: number): number {
  requireCount("n", n);
  requireCount("c", c);
  requireCount("k", k);
  if (c > n) throw new StatsInputError("c", c, `correct samples exceed samples (n = ${n})`);
  if (k < 1) throw new StatsInputError("k", k, "k must be at least 1");
  if (k > n) {
    throw new StatsInputError("k", k, `k must be <= n (n = ${n}); sample more or lower k`);
  }
  // With fewer than k wrong samples every draw of k holds a correct one.
  if (n - c < k) return 1;
  let allWrong = 1;
  for (let i = n - c + 1; i <= n; i++) allWrong *= 1 - k / i;
  return 1 - allWrong;
}
