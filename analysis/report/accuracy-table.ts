import { mean, summarize } from "../stats/mod.ts";
import type { RunGroup } from "./group-runs.ts";
import { ReportError } from "./report-error.ts";
import { AVERAGE, type RunSummary } from "./run-summary.ts";

/** One group's accuracy on one benchmark over its runs (seeds). */
export interface AccuracyCell {
  readonly kind: "accuracy-cell";
  readonly group: string;
  readonly benchmark: string;
  readonly n: number;
  readonly mean: number;
  /** Standard error of the mean over runs; null for a single run. */
  readonly sem: number | null;
  /** The per-run accuracies, in run order (the samples of every test below). */
  readonly samples: readonly number[];
}

/**
 * The benchmarks every run was evaluated on, sorted, then the average column. Runs evaluated on
 * different benchmark sets cannot share an average; the error names both runs.
 */
export function benchmarksOf(runs: readonly RunSummary[]): string[] {
  const first = Object.keys(runs[0].accuracy).sort();
  if (first.length === 0) throw new ReportError(`run ${runs[0].runId} has no evaluation yet`);
  for (const run of runs) {
    const own = Object.keys(run.accuracy).sort();
    if (own.join("\u0000") !== first.join("\u0000")) {
      throw new ReportError(
        `run ${run.runId} was evaluated on [${own.join(", ")}] but run ${runs[0].runId} on ` +
          `[${first.join(", ")}]; report runs evaluated on the same benchmarks`,
      );
    }
  }
  return [...first, AVERAGE];
}

/** A run's accuracy on a benchmark, or its mean over benchmarks for the average column. */
export function runAccuracy(run: RunSummary, benchmark: string): number {
  return benchmark === AVERAGE
    ? mean(Object.values(run.accuracy), `${run.runId}.accuracy`)
    : run.accuracy[benchmark];
}

/**
 * Accuracy mean ± SEM per group and benchmark, as the papers' main tables.
 *
 * @example
 * ```ts
 * accuracyTable(groupRuns(runs, "estimator"), ["math", "average"]);
 * ```
 */
export function accuracyTable(
  groups: readonly RunGroup[],
  benchmarks: readonly string[],
): AccuracyCell[] {
  return groups.flatMap((g) =>
    benchmarks.map((benchmark) => {
      const samples = g.runs.map((r) => runAccuracy(r, benchmark));
      return Object.freeze({
        kind: "accuracy-cell",
        group: g.value,
        benchmark,
        n: samples.length,
        mean: mean(samples),
        sem: samples.length >= 2 ? summarize(samples).sem : null,
        samples,
      });
    })
  );
}
