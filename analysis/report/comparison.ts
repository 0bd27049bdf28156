import {
  pairedFromSamples,
  type PairedResult,
  welchFromSamples,
  type WelchResult,
} from "../stats/mod.ts";
import type { AccuracyCell } from "./accuracy-table.ts";

/**
 * Row group against column group on one benchmark: Welch's test of row minus column, and the
 * paired test where the two groups ran the same seeds.
 */
export interface Comparison {
  readonly kind: "comparison";
  readonly group: string;
  readonly against: string;
  readonly benchmark: string;
  /** Null when either side has fewer than two runs (no variance, no test). */
  readonly welch: WelchResult | null;
  /**
   * The paired test over seeds, run i of one group against the run of the other with the same
   * seed: runs of one seed share their keyed random draws and their synthetic benchmark, so their
   * accuracies are correlated and the paired test removes what they share. Null unless both
   * groups ran the same set of at least two distinct seeds, each once.
   */
  readonly paired: PairedResult | null;
  /** Difference of means, defined even when the test is not. */
  readonly diff: number;
  /**
   * Config keys other than the grouping key whose values differ between the two groups: when
   * any, the comparison is confounded (the difference is not the grouping key's alone).
   */
  readonly confounds: readonly string[];
}

/** The config keys in which two groups differ beyond the one compared (config-differences.ts). */
export type ConfoundsOf = (group: string, against: string) => readonly string[];

/** b's samples in the order of a's seeds, or null when the seeds do not pair one to one. */
function pairBySeed(a: AccuracyCell, b: AccuracyCell): readonly number[] | null {
  const distinct = (seeds: readonly unknown[]) =>
    seeds.every((s) => s !== null) && new Set(seeds).size === seeds.length;
  if (a.n < 2 || a.n !== b.n || !distinct(a.seeds) || !distinct(b.seeds)) return null;
  const bySeed = new Map(b.seeds.map((s, i) => [s, b.samples[i]]));
  const paired = a.seeds.map((s) => bySeed.get(s));
  return paired.every((x) => x !== undefined) ? paired as number[] : null;
}

function compare(a: AccuracyCell, b: AccuracyCell, confoundsOf: ConfoundsOf): Comparison {
  const pairedB = pairBySeed(a, b);
  return Object.freeze({
    kind: "comparison",
    group: a.group,
    against: b.group,
    benchmark: a.benchmark,
    welch: a.n >= 2 && b.n >= 2 ? welchFromSamples(a.samples, b.samples) : null,
    paired: pairedB ? pairedFromSamples(a.samples, pairedB) : null,
    diff: a.mean - b.mean,
    confounds: Object.freeze([...confoundsOf(a.group, b.group)]),
  });
}

/**
 * Every group except the baseline against the baseline, per column both have: difference, 95%
 * CI, p. A column the baseline lacks (another benchmark or k) has no comparison.
 *
 * @example
 * ```ts
 * import type { AccuracyCell } from "./accuracy-table.ts";
 * import { againstBaseline } from "./comparison.ts";
 * declare const cells: readonly AccuracyCell[];
 *
 * againstBaseline(cells, "grpo").map((c) => [c.group, c.benchmark, c.welch?.p]);
 * ```
 */
export function againstBaseline(
  cells: readonly AccuracyCell[],
  baseline: string,
  confoundsOf: ConfoundsOf = () => [],
): Comparison[] {
  return cells.filter((c) => c.group !== baseline).flatMap((c) => {
    const base = cells.find((b) => b.group === baseline && b.benchmark === c.benchmark);
    return base ? [compare(c, base, confoundsOf)] : [];
  });
}

/**
 * The full pairwise matrix on one benchmark (row minus column), the papers' appendix tables of
 * differences and p-values; the diagonal is left out.
 */
export function pairwiseMatrix(
  cells: readonly AccuracyCell[],
  benchmark: string,
  confoundsOf: ConfoundsOf = () => [],
): Comparison[] {
  const row = cells.filter((c) => c.benchmark === benchmark);
  return row.flatMap((a) =>
    row.filter((b) => b.group !== a.group).map((b) => compare(a, b, confoundsOf))
  );
}
