import { SPIKE_MULTIPLE } from "../stats/mod.ts";
import { type AccuracyCell, accuracyColumns, accuracyTable } from "./accuracy-table.ts";
import { againstBaseline, type Comparison, pairwiseMatrix } from "./comparison.ts";
import {
  type ConfigDifference,
  configDifferences,
  confoundsBetween,
} from "./config-differences.ts";
import { type CostRow, costTable } from "./cost-table.ts";
import { type CriticRow, criticTable } from "./critic-table.ts";
import { groupRuns, type RunGroup } from "./group-runs.ts";
import { type ProblemComparison, problemComparisons } from "./problem-comparison.ts";
import { type AccuracyMetric, AVERAGE, type RunSummary } from "./run-summary.ts";
import { type LemmaRow, lemmaTable, type StabilityRow, stabilityTable } from "./stability-table.ts";

/** Options of a report: grouping key, baseline group value, spike threshold. */
export interface ReportOptions {
  readonly groupBy: string;
  /**
   * Group value to compare against; the first group in sorted order when absent. A value no
   * run has leaves the comparisons empty, with `vsBaselineEmpty` saying so.
   */
  readonly baseline?: string;
  /** The spike rule's multiple (`gradientSpikes`); SPIKE_MULTIPLE when absent. */
  readonly spikeMultiple?: number;
  /** Which accuracy the runs carry, for the report's wording (default avg@k). */
  readonly metric?: AccuracyMetric;
}

/** The tables the papers print, as data: rendered to Markdown, CSV or JSON by the CLI. */
export interface Report {
  readonly kind: "report";
  readonly groupBy: string;
  readonly baseline: string;
  readonly groups: readonly { readonly value: string; readonly runs: readonly string[] }[];
  /** Accuracy columns: one per benchmark and k ("math avg@16"), then "average" if any. */
  readonly benchmarks: readonly string[];
  /** The columns the average column averages: those every selected run has. */
  readonly averageOf: readonly string[];
  /** Selected runs with no evaluation (they add nothing to the accuracy tables). */
  readonly unevaluated: readonly string[];
  readonly accuracy: readonly AccuracyCell[];
  /** Config keys other than `groupBy` whose values differ between groups (the confounds). */
  readonly configDifferences: readonly ConfigDifference[];
  readonly vsBaseline: readonly Comparison[];
  /** Why `vsBaseline` is empty; null when it is not. */
  readonly vsBaselineEmpty: string | null;
  /** Each group against the baseline problem by problem, per benchmark at one k both have. */
  readonly vsBaselineByProblem: readonly ProblemComparison[];
  /** Why `vsBaselineByProblem` is empty; null when it is not. */
  readonly vsBaselineByProblemEmpty: string | null;
  /** Pairwise comparisons on the average accuracy, row minus column. */
  readonly pairwise: readonly Comparison[];
  /** Why `pairwise` is empty; null when it is not. */
  readonly pairwiseEmpty: string | null;
  readonly stability: readonly StabilityRow[];
  readonly lemma: readonly LemmaRow[];
  readonly critic: readonly CriticRow[];
  readonly cost: readonly CostRow[];
  readonly spikeMultiple: number;
  readonly metric: AccuracyMetric;
}

/**
 * Builds the report of runs grouped by one config key across seeds.
 *
 * @example
 * ```ts
 * import { buildReport } from "./build-report.ts";
 * import type { RunSummary } from "./run-summary.ts";
 * declare const runs: readonly RunSummary[];
 *
 * const report = buildReport(runs, { groupBy: "estimator", baseline: "grpo" });
 * ```
 */
export function buildReport(runs: readonly RunSummary[], options: ReportOptions): Report {
  const groups = groupRuns(runs, options.groupBy);
  const baseline = options.baseline ?? groups[0].value;
  const spikeMultiple = options.spikeMultiple ?? SPIKE_MULTIPLE;
  const columns = accuracyColumns(runs);
  const accuracy = accuracyTable(groups, columns);
  const differences = configDifferences(groups, options.groupBy);
  const confoundsOf = (a: string, b: string) => confoundsBetween(differences, a, b);
  const vsBaseline = againstBaseline(accuracy, baseline, confoundsOf);
  const pairwise = pairwiseMatrix(accuracy, AVERAGE, confoundsOf);
  const byProblem = problemComparisons(groups, baseline);
  return Object.freeze({
    kind: "report",
    groupBy: options.groupBy,
    baseline,
    groups: groups.map((g) => ({ value: g.value, runs: g.runs.map((r) => r.runId) })),
    benchmarks: columns.columns,
    averageOf: columns.averageOf,
    unevaluated: runs.filter((r) => Object.keys(r.accuracy).length === 0).map((r) => r.runId),
    accuracy,
    configDifferences: differences,
    vsBaseline,
    vsBaselineEmpty: vsBaseline.length
      ? null
      : whyNoBaselineComparison(groups, accuracy, options.groupBy, baseline),
    vsBaselineByProblem: byProblem,
    vsBaselineByProblemEmpty: byProblem.length
      ? null
      : vsBaseline.length
      ? "no group shares a benchmark at one k with the baseline in per-problem outcomes"
      : whyNoBaselineComparison(groups, accuracy, options.groupBy, baseline),
    pairwise,
    pairwiseEmpty: pairwise.length ? null : whyNoPairwise(groups),
    stability: stabilityTable(groups, spikeMultiple),
    lemma: lemmaTable(groups),
    critic: criticTable(groups),
    cost: costTable(groups, accuracy, baseline),
    spikeMultiple,
    metric: options.metric ?? "avg@k",
  });
}

function columnsOf(cells: readonly AccuracyCell[], group: string): string {
  const own = cells.filter((c) => c.group === group && c.benchmark !== AVERAGE);
  return `[${own.map((c) => c.benchmark).join(", ")}]`;
}

function whyNoBaselineComparison(
  groups: readonly RunGroup[],
  cells: readonly AccuracyCell[],
  key: string,
  baseline: string,
): string {
  const values = groups.map((g) => g.value);
  if (!values.includes(baseline)) {
    return `no selected run has ${key}=${baseline}; the selected groups are ${values.join(", ")}`;
  }
  if (values.length === 1) {
    return `only ${key}=${baseline} is selected: there is no other group to compare with it`;
  }
  if (!cells.some((c) => c.group === baseline)) {
    return `the baseline's runs (${key}=${baseline}) have no evaluation`;
  }
  const others = values.filter((v) => v !== baseline);
  return `no benchmark at the same k is shared: the baseline ${key}=${baseline} has ` +
    `${columnsOf(cells, baseline)}, ${
      others.map((v) => `${key}=${v} has ${columnsOf(cells, v)}`).join(", ")
    }`;
}

function whyNoPairwise(groups: readonly RunGroup[]): string {
  // With two groups or more, every group has an average cell whenever there is an average.
  return groups.length < 2
    ? "only one group is selected"
    : "the selected runs share no benchmark at the same k, so there is no average accuracy " +
      "to compare";
}
