import { mean, summarize } from "../stats/mod.ts";
import type { RunGroup } from "./group-runs.ts";
import { AVERAGE, type ConfigValue, type RunSummary } from "./run-summary.ts";

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
  /** Each sample's run seed (config key `seed`), same order: what pairs two groups' runs. */
  readonly seeds: readonly ConfigValue[];
}

/** The accuracy columns of a set of runs, and which of them the average column averages. */
export interface AccuracyColumns {
  /** every column some run has (sorted), then the average column when there is one */
  readonly columns: readonly string[];
  /** the columns every run has: the average is over these, so it compares like with like */
  readonly averageOf: readonly string[];
}

/**
 * The accuracy columns of the runs: one per benchmark and samples per problem, as the loader
 * labels them ("math avg@16"), so runs evaluated with a different k never share a column. The
 * average column averages the columns every run has and is left out when they share none.
 *
 * @example
 * ```ts
 * import { accuracyColumns } from "./accuracy-table.ts";
 * import type { RunSummary } from "./run-summary.ts";
 * declare const runs: readonly RunSummary[];
 *
 * accuracyColumns(runs); // { columns: ["gsm8k avg@4", "math avg@4", "average"], averageOf: [...] }
 * ```
 */
export function accuracyColumns(runs: readonly RunSummary[]): AccuracyColumns {
  // Numeric order, so "math avg@4" comes before "math avg@16".
  const all = [...new Set(runs.flatMap((r) => Object.keys(r.accuracy)))]
    .sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
  const averageOf = all.filter((c) => runs.every((r) => c in r.accuracy));
  return { columns: averageOf.length ? [...all, AVERAGE] : all, averageOf };
}

/** A run's accuracy in a column (its mean over `averageOf` for the average), or undefined. */
export function runAccuracy(
  run: RunSummary,
  column: string,
  averageOf: readonly string[],
): number | undefined {
  return column === AVERAGE
    ? mean(averageOf.map((c) => run.accuracy[c]), `${run.runId}.accuracy`)
    : run.accuracy[column];
}

/**
 * Accuracy mean ± SEM per group and column, as the papers' main tables, over the group's runs
 * that have the column; a group with none has no cell there.
 *
 * @example
 * ```ts
 * import { accuracyColumns, accuracyTable } from "./accuracy-table.ts";
 * import { groupRuns } from "./group-runs.ts";
 * import type { RunSummary } from "./run-summary.ts";
 * declare const runs: readonly RunSummary[];
 *
 * accuracyTable(groupRuns(runs, "estimator"), accuracyColumns(runs));
 * ```
 */
export function accuracyTable(
  groups: readonly RunGroup[],
  { columns, averageOf }: AccuracyColumns,
): AccuracyCell[] {
  return groups.flatMap((g) =>
    columns.flatMap((benchmark): AccuracyCell[] => {
      const measured = g.runs.map((r) => ({
        seed: r.config.seed ?? null,
        accuracy: runAccuracy(r, benchmark, averageOf),
      })).filter((x): x is { seed: ConfigValue; accuracy: number } => x.accuracy !== undefined);
      if (measured.length === 0) return [];
      const samples = measured.map((x) => x.accuracy);
      return [Object.freeze({
        kind: "accuracy-cell",
        group: g.value,
        benchmark,
        n: samples.length,
        mean: mean(samples),
        sem: samples.length >= 2 ? summarize(samples).sem : null,
        samples,
        seeds: measured.map((x) => x.seed),
      })];
    })
  );
}
