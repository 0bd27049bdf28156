import { StatsInputError } from "./stats-input-error.ts";
import { summarize } from "./mean-sem.ts";
import { type TTest, tTest } from "./student-t.ts";
import { welchFromSamples } from "./welch.ts";

/**
 * The paired t-test of mean(a - b) over pairs (a_i, b_i), e.g. two configurations trained on the
 * same seeds: common random numbers and a common benchmark make a_i and b_i correlated, and the
 * test on the differences removes what they share.
 */
export interface PairedResult extends TTest {
  readonly kind: "paired";
  /**
   * Number of pairs. `diff` is mean(a - b), equal to mean(a) - mean(b); `se` is
   * sd(a - b) / sqrt(n); `df` is n - 1.
   */
  readonly n: number;
  /** Pearson's correlation of a and b; null when either has no variance. */
  readonly correlation: number | null;
  /**
   * Welch's standard error over the paired one on the same values: how much smaller the paired
   * test's error is (sqrt of the variance reduction); null when the paired SE is 0.
   */
  readonly seRatio: number | null;
}

/**
 * Paired t-test, as scipy.stats.ttest_rel: t = mean(d) / (sd(d) / sqrt(n)), df = n - 1. When
 * every difference is equal, t is ±Infinity (p = 0) if they differ from 0 and NaN (p = NaN) if
 * they are 0, and the interval collapses to the difference.
 *
 * @example
 * ```ts
 * const r = pairedFromSamples([0.41, 0.43, 0.42], [0.40, 0.41, 0.41]);
 * r.t; r.p; r.correlation; r.seRatio; // Welch's SE / the paired SE
 * ```
 */
export function pairedFromSamples(
  a: readonly number[],
  b: readonly number[],
  level = 0.95,
): PairedResult {
  if (a.length !== b.length) {
    throw new StatsInputError("b.length", b.length, `the same length as a (${a.length}): pairs`);
  }
  if (a.length < 2) {
    throw new StatsInputError("a.length", a.length, "a paired test needs at least 2 pairs");
  }
  if (!(level > 0 && level < 1)) throw new StatsInputError("level", level, "must lie in (0, 1)");
  const d = summarize(a.map((x, i) => x - b[i]), "a - b");
  const welch = welchFromSamples(a, b, level);
  return Object.freeze({
    kind: "paired",
    n: d.n,
    ...tTest(d.mean, d.sem, d.n - 1, level),
    correlation: pearson(a, b),
    seRatio: d.sem === 0 ? null : welch.se / d.sem,
  });
}

/** Pearson's r; null when either sample has zero variance. */
function pearson(a: readonly number[], b: readonly number[]): number | null {
  const sa = summarize(a, "a");
  const sb = summarize(b, "b");
  if (sa.variance === 0 || sb.variance === 0) return null;
  let cov = 0;
  a.forEach((x, i) => cov += (x - sa.mean) * (b[i] - sb.mean));
  return cov / (a.length - 1) / Math.sqrt(sa.variance * sb.variance);
}
