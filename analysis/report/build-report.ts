import { SPIKE_MULTIPLE } from "../stats/mod.ts";
import { type AccuracyCell, accuracyTable, benchmarksOf } from "./accuracy-table.ts";
import { againstBaseline, type Comparison, pairwiseMatrix } from "./comparison.ts";
import { type CostRow, costTable } from "./cost-table.ts";
import { type CriticRow, criticTable } from "./critic-table.ts";
import { groupRuns } from "./group-runs.ts";
import { ReportError } from "./report-error.ts";
import { type AccuracyMetric, AVERAGE, type RunSummary } from "./run-summary.ts";
import { type LemmaRow, lemmaTable, type StabilityRow, stabilityTable } from "./stability-table.ts";

/** Options of a report: grouping key, baseline group value, spike threshold. */
export interface ReportOptions {
  readonly groupBy: string;
  /** Group value to compare against; the first group in sorted order when absent. */
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
  readonly benchmarks: readonly string[];
  readonly accuracy: readonly AccuracyCell[];
  readonly vsBaseline: readonly Comparison[];
  /** Pairwise comparisons on the average accuracy, row minus column. */
  readonly pairwise: readonly Comparison[];
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
 * const report = buildReport(runs, { groupBy: "estimator", baseline: "grpo" });
 * ```
 */
export function buildReport(runs: readonly RunSummary[], options: ReportOptions): Report {
  const groups = groupRuns(runs, options.groupBy);
  const baseline = options.baseline ?? groups[0].value;
  if (!groups.some((g) => g.value === baseline)) {
    throw new ReportError(
      `baseline ${options.groupBy}=${baseline} matches no run; groups: ${
        groups.map((g) => g.value).join(", ")
      }`,
    );
  }
  const spikeMultiple = options.spikeMultiple ?? SPIKE_MULTIPLE;
  const benchmarks = benchmarksOf(runs);
  const accuracy = accuracyTable(groups, benchmarks);
  return Object.freeze({
    kind: "report",
    groupBy: options.groupBy,
    baseline,
    groups: groups.map((g) => ({ value: g.value, runs: g.runs.map((r) => r.runId) })),
    benchmarks,
    accuracy,
    vsBaseline: againstBaseline(accuracy, baseline),
    pairwise: pairwiseMatrix(accuracy, AVERAGE),
    stability: stabilityTable(groups, spikeMultiple),
    lemma: lemmaTable(groups),
    critic: criticTable(groups),
    cost: costTable(groups, accuracy, baseline),
    spikeMultiple,
    metric: options.metric ?? "avg@k",
  });
}
