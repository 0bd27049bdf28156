/**
 * Whether the study agrees with a paper's claim, decided from the data: a two-sided test of the
 * claimed direction at the grid's significance level. Welch's t-test compares two cells' per-run
 * values; where the design is paired (both cells ran the same seeds on the same problems, see
 * pairing.ts) the paired t-test on the per-seed differences is reported beside it and decides the
 * verdict; a one-sample t-test compares one cell's per-run Lemma 4.2 multipliers with 1.
 */
import { pairedFromSamples, tQuantileAt, twoSidedP, welchFromSamples } from "../analysis/mod.ts";
import type { Expectation } from "./grid-schema.ts";

/** A test of a difference: cell minus reference (the other cell's mean, or 1). */
export interface DifferenceTest {
  readonly diff: number;
  readonly se: number;
  readonly ci: readonly [number, number];
  readonly t: number;
  readonly df: number;
  readonly p: number;
}

/**
 * The paired t-test of a claim, cell minus reference over the seeds both ran (scipy.stats.ttest_rel
 * semantics): `diff` is the mean per-seed difference, `df` = n - 1.
 */
export interface PairedTest extends DifferenceTest {
  /** Pairs (seeds) tested. */
  readonly n: number;
  /** Pearson's r of the two cells' per-seed values; null when either has no spread. */
  readonly correlation: number | null;
  /** Welch's standard error over the paired one on the same values; null when the latter is 0. */
  readonly seRatio: number | null;
}

/** Which test gave a claim's verdict. */
export type VerdictTest = "paired" | "welch" | "one-sample";

/**
 * The verdict of one claim. `pending`: a cell has no completed runs yet; `not testable`: too few
 * runs, or no variance in either cell and equal means.
 */
export type Verdict = "agrees" | "disagrees" | "inconclusive" | "not testable" | "pending";

/**
 * Welch's test of mean(a) - mean(b); null when either side has fewer than 2 values.
 *
 * @example
 * ```ts
 * welchTest([0.5, 0.6, 0.7], [0.4, 0.5, 0.45])?.p;
 * ```
 */
export function welchTest(a: readonly number[], b: readonly number[]): DifferenceTest | null {
  if (a.length < 2 || b.length < 2) return null;
  const w = welchFromSamples(a, b);
  return { diff: w.diff, se: w.se, ci: w.ci, t: w.t, df: w.df, p: w.p };
}

/**
 * The paired t-test of mean(a - b) over pairs (a[i], b[i]), the same seed in both cells; null with
 * fewer than 2 pairs. Every difference equal gives t = ±∞ (p = 0), or NaN when they are all 0.
 *
 * @example
 * ```ts
 * pairedTest([0.36, 0.38, 0.36, 0.35], [0.37, 0.39, 0.36, 0.36])?.p; // about 0.06
 * ```
 */
export function pairedTest(a: readonly number[], b: readonly number[]): PairedTest | null {
  if (a.length < 2 || a.length !== b.length) return null;
  const r = pairedFromSamples(a, b);
  return {
    diff: r.diff,
    se: r.se,
    ci: r.ci,
    t: r.t,
    df: r.df,
    p: r.p,
    n: r.n,
    correlation: r.correlation,
    seRatio: r.seRatio,
  };
}

/**
 * The test whose result is a claim's verdict: the paired test where the design is paired and the
 * test is defined (not every per-seed difference 0), else Welch's (or the one-sample test).
 *
 * @example
 * ```ts
 * const welch = welchTest([0.5, 0.6, 0.7], [0.4, 0.5, 0.45]);
 * const paired = pairedTest([0.5, 0.6, 0.7], [0.4, 0.5, 0.45]);
 * verdictTest(true, paired); // "paired"
 * verdictTest(false, paired); // "welch"
 * welch?.p;
 * ```
 */
export function verdictTest(
  paired: boolean,
  test: Pick<DifferenceTest, "p"> | null,
): "paired" | "welch" {
  return paired && test !== null && !Number.isNaN(test.p) ? "paired" : "welch";
}

/**
 * The test a claim's verdict was taken from: its paired test where `decidedBy` says so, else its
 * Welch (or one-sample) test. Claims read from a study.json written before claims were paired
 * have no `decidedBy`: Welch's decided them.
 *
 * @example
 * ```ts
 * const test = welchTest([0.5, 0.6, 0.7], [0.4, 0.5, 0.45]);
 * const paired = pairedTest([0.5, 0.6, 0.7], [0.4, 0.5, 0.45]);
 * decidingTest({ test, paired, decidedBy: "paired" })?.p; // the paired p
 * ```
 */
export function decidingTest(claim: {
  readonly test: DifferenceTest | null;
  readonly paired?: DifferenceTest | null;
  readonly decidedBy?: VerdictTest;
}): DifferenceTest | null {
  return claim.decidedBy === "paired" ? claim.paired ?? null : claim.test;
}

/**
 * One-sample t-test of mean(xs) - mu0; null with fewer than 2 values. Zero spread gives t = ±∞
 * (p = 0) when the mean differs from mu0, NaN otherwise, as the Welch test does.
 *
 * @example
 * ```ts
 * oneSampleTest([1.2, 1.4, 1.3], 1)?.p; // about 0.02
 * ```
 */
export function oneSampleTest(xs: readonly number[], mu0: number): DifferenceTest | null {
  if (xs.length < 2) return null;
  const n = xs.length;
  const m = xs.reduce((s, x) => s + x, 0) / n;
  const se = Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (n - 1) / n);
  const diff = m - mu0;
  const t = diff / se;
  const half = se === 0 ? 0 : tQuantileAt(0.975, n - 1) * se;
  return { diff, se, ci: [diff - half, diff + half], t, df: n - 1, p: twoSidedP(t, n - 1) };
}

/**
 * The verdict of `expect` given a test of cell minus reference at level `alpha`: a significant
 * difference in the claimed direction agrees and in the other disagrees; otherwise inconclusive,
 * except that "not-lower" (the paper reports no loss) agrees unless the cell is significantly
 * lower.
 *
 * @example
 * ```ts
 * verdictOf("higher", { diff: 0.05, p: 0.01 }, 0.05); // "agrees"
 * ```
 */
export function verdictOf(
  expect: Expectation,
  test: Pick<DifferenceTest, "diff" | "p"> | null,
  alpha: number,
): Verdict {
  if (test === null || Number.isNaN(test.p)) return "not testable";
  const significant = test.p < alpha;
  switch (expect) {
    case "higher":
      return significant ? (test.diff > 0 ? "agrees" : "disagrees") : "inconclusive";
    case "lower":
      return significant ? (test.diff < 0 ? "agrees" : "disagrees") : "inconclusive";
    case "not-lower":
      return significant && test.diff < 0 ? "disagrees" : "agrees";
    case "not-one":
      return significant ? "agrees" : "inconclusive";
    case "above-one":
      return significant ? (test.diff > 0 ? "agrees" : "disagrees") : "inconclusive";
  }
}
