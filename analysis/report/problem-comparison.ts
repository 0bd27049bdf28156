import {
  mcnemarExact,
  type McNemarResult,
  mean,
  pairedFromSamples,
  type PairedResult,
} from "../stats/mod.ts";
import type { RunGroup } from "./group-runs.ts";
import type { BenchmarkOutcomes } from "./run-summary.ts";

/** One problem's accuracy in two groups: correct samples over samples, mean over each's runs. */
export interface ProblemPair {
  readonly problem: string;
  readonly accuracy: number;
  readonly againstAccuracy: number;
}

/**
 * One group against another, problem by problem, on a benchmark both evaluated: the problems
 * are the same items graded twice, so what one group gets right and the other wrong is the whole
 * difference, and pairing on problems removes how hard each problem is.
 */
export interface ProblemComparison {
  readonly kind: "problem-comparison";
  readonly group: string;
  readonly against: string;
  /** The benchmark at k samples per problem, as an avg@k column: "math avg@4". */
  readonly benchmark: string;
  /** Why the two groups cannot be paired problem by problem; null when they are. */
  readonly unpaired: string | null;
  /** SHA-256 of the problems both groups were graded on; null when unpaired. */
  readonly sha256: string | null;
  /** Every problem both groups evaluated, in id order (numbers in ids by value). */
  readonly problems: readonly ProblemPair[];
  /**
   * Problems the group does better on than `against`, worse on, and level. With one right/wrong
   * outcome per problem and group, `ahead` and `behind` are McNemar's discordant counts.
   */
  readonly ahead: number;
  readonly behind: number;
  readonly level: number;
  /** Mean over problems of the group's accuracy minus against's; null when unpaired. */
  readonly diff: number | null;
  /**
   * McNemar's exact test, where each group has one run with one sample per problem (one
   * right/wrong outcome per problem and group); null otherwise.
   */
  readonly mcnemar: McNemarResult | null;
  /**
   * The paired t-test over problems on their accuracies: the CI of `diff`, the correlation of
   * the two groups' per-problem accuracies and the variance it removes; null with fewer than 2
   * problems.
   */
  readonly paired: PairedResult | null;
  /** The test's two-sided p: McNemar's where it applies, else the paired t-test's. */
  readonly p: number | null;
}

/** One run's outcomes on a benchmark column. */
interface RunOutcomes extends BenchmarkOutcomes {
  readonly runId: string;
}

const byId = (a: string, b: string) => a.localeCompare(b, "en", { numeric: true });

/** The first 12 hex digits of a hash, enough to tell hashes apart in a sentence. */
const short = (sha256: string) => `${sha256.slice(0, 12)}…`;

function outcomesOf(group: RunGroup, column: string): RunOutcomes[] {
  return group.runs.flatMap((r) => {
    const outcomes = r.problems?.[column];
    return outcomes ? [{ runId: r.runId, ...outcomes }] : [];
  });
}

/** Why two groups' outcomes on a column do not pair problem by problem; null when they do. */
function whyUnpaired(
  key: string,
  sides: readonly { readonly value: string; readonly runs: readonly RunOutcomes[] }[],
): string | null {
  const unhashed = sides.flatMap((s) => s.runs).find((r) => r.sha256 === null);
  if (unhashed) {
    return `run ${unhashed.runId} was recorded before runs recorded the SHA-256 of their ` +
      `benchmarks, so its problems cannot be matched to the other group's by content`;
  }
  const hashes = sides.map((s) => [...new Set(s.runs.map((r) => r.sha256!))]);
  for (const [i, side] of sides.entries()) {
    if (hashes[i].length > 1) {
      return `the runs of ${key}=${side.value} were graded on different problems (SHA-256 ` +
        `${hashes[i].map(short).join(", ")})`;
    }
  }
  if (hashes[0][0] !== hashes[1][0]) {
    return `the two groups were graded on different problems: ` +
      sides.map((s, i) => `${key}=${s.value} on SHA-256 ${short(hashes[i][0])}`).join(", ");
  }
  return null;
}

/** Each problem's accuracy in a group: c / n, mean over the group's runs that evaluated it. */
function accuracyByProblem(runs: readonly RunOutcomes[]): Map<string, number> {
  const perRun = Map.groupBy(
    runs.flatMap((r) => r.problems.map((p) => ({ problem: p.problem, accuracy: p.c / p.n }))),
    (x) => x.problem,
  );
  return new Map([...perRun].map(([problem, xs]) => [problem, mean(xs.map((x) => x.accuracy))]));
}

/** One right/wrong outcome per problem and group: each group one run, one sample a problem. */
function binaryOutcomes(sides: readonly (readonly RunOutcomes[])[]): boolean {
  return sides.every((runs) => runs.length === 1 && runs[0].problems.every((p) => p.n === 1));
}

function unpairedComparison(
  group: string,
  against: string,
  benchmark: string,
  unpaired: string,
): ProblemComparison {
  return Object.freeze({
    kind: "problem-comparison",
    group,
    against,
    benchmark,
    unpaired,
    sha256: null,
    problems: [],
    ahead: 0,
    behind: 0,
    level: 0,
    diff: null,
    mcnemar: null,
    paired: null,
    p: null,
  });
}

function compareProblems(
  group: RunGroup,
  against: RunGroup,
  column: string,
): ProblemComparison {
  const sides = [group, against].map((g) => ({ value: g.value, runs: outcomesOf(g, column) }));
  const unpaired = whyUnpaired(group.key, sides);
  if (unpaired) return unpairedComparison(group.value, against.value, column, unpaired);
  const [mine, theirs] = sides.map((s) => accuracyByProblem(s.runs));
  const problems = [...mine.keys()].filter((p) => theirs.has(p)).sort(byId)
    .map((problem) => ({
      problem,
      accuracy: mine.get(problem)!,
      againstAccuracy: theirs.get(problem)!,
    }));
  if (problems.length === 0) {
    return unpairedComparison(
      group.value,
      against.value,
      column,
      "the two groups share no problem id",
    );
  }
  const ahead = problems.filter((p) => p.accuracy > p.againstAccuracy).length;
  const behind = problems.filter((p) => p.accuracy < p.againstAccuracy).length;
  const mcnemar = binaryOutcomes(sides.map((s) => s.runs)) ? mcnemarExact(ahead, behind) : null;
  const paired = problems.length >= 2
    ? pairedFromSamples(problems.map((p) => p.accuracy), problems.map((p) => p.againstAccuracy))
    : null;
  return Object.freeze({
    kind: "problem-comparison",
    group: group.value,
    against: against.value,
    benchmark: column,
    unpaired: null,
    sha256: sides[0].runs[0].sha256,
    problems,
    ahead,
    behind,
    level: problems.length - ahead - behind,
    diff: mean(problems.map((p) => p.accuracy - p.againstAccuracy)),
    mcnemar,
    paired,
    p: mcnemar?.p ?? paired?.p ?? null,
  });
}

/**
 * Every group except the baseline against the baseline, problem by problem, on each benchmark at
 * one k that both have per-problem outcomes for; where their problems differ (or cannot be told
 * the same), the comparison says why instead.
 *
 * @example
 * ```ts
 * import { groupRuns } from "./group-runs.ts";
 * import { problemComparisons } from "./problem-comparison.ts";
 * import type { RunSummary } from "./run-summary.ts";
 * declare const runs: readonly RunSummary[];
 *
 * problemComparisons(groupRuns(runs, "estimator"), "grpo").map((c) => [c.benchmark, c.p]);
 * ```
 */
export function problemComparisons(
  groups: readonly RunGroup[],
  baseline: string,
): ProblemComparison[] {
  const base = groups.find((g) => g.value === baseline);
  if (!base) return [];
  const columnsOf = (g: RunGroup) => new Set(g.runs.flatMap((r) => Object.keys(r.problems ?? {})));
  const baseColumns = columnsOf(base);
  return groups.filter((g) => g !== base).flatMap((g) =>
    [...columnsOf(g)].filter((c) => baseColumns.has(c)).sort(byId)
      .map((column) => compareProblems(g, base, column))
  );
}
