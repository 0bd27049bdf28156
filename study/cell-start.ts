/**
 * A cell's accuracy before training, from its start run (grid `start`): the config of the cell it
 * names run for 0 steps at seed 0, which evaluates the initial team once. Cells whose initial
 * teams are the same share one start run.
 */
import { type CellBenchmark, cellBenchmarks, sameBenchmark } from "./cell-benchmarks.ts";
import type { PlannedStart } from "./plan-runs.ts";
import type { StudyRun } from "./study-data.ts";

/** A cell's start run and what it measured. */
export interface CellStart {
  /** The cell whose config the start run runs: this cell, or the one whose run it shares. */
  readonly cell: string;
  readonly runId: string;
  /** The cells sharing the run (its own cell first). */
  readonly sharedWith: readonly string[];
  /** The run is complete in the store; its numbers are null until it is. */
  readonly complete: boolean;
  /** avg@k and pass@k of the initial team (mean over the evaluated benchmarks). */
  readonly avg: number | null;
  readonly pass: number | null;
  /** What the start run was evaluated on. */
  readonly benchmarks: readonly CellBenchmark[];
  /**
   * Whether the start run evaluated the same problems as every run of the cell; null when either
   * recorded none.
   */
  readonly sameBenchmark: boolean | null;
  readonly seconds: number | null;
}

/** The mean of a run summary's accuracy columns (every evaluated benchmark); null without any. */
function meanAccuracy(accuracy: Readonly<Record<string, number>>): number | null {
  const xs = Object.values(accuracy);
  return xs.length === 0 ? null : xs.reduce((s, x) => s + x, 0) / xs.length;
}

/**
 * The start of cell `id` (null when it declares none): its start run among `starts`, with the
 * numbers of that run when `runs` (the completed start runs) holds it.
 *
 * @example
 * ```ts
 * import type { PlannedStart } from "./plan-runs.ts";
 * import type { StudyRun } from "./study-data.ts";
 * declare const starts: readonly PlannedStart[];
 * declare const runs: readonly StudyRun[];
 * cellStart("refine-drmas", starts, runs, [])?.avg;
 * ```
 */
export function cellStart(
  id: string,
  starts: readonly PlannedStart[],
  runs: readonly StudyRun[],
  cellBenchmarksOfRuns: readonly CellBenchmark[],
): CellStart | null {
  const start = starts.find((s) => s.cells.includes(id));
  if (start === undefined) return null;
  const run = runs.find((r) => r.runId === start.runId);
  const benchmarks = run ? cellBenchmarks([run]) : [];
  return {
    cell: start.cell.id,
    runId: start.runId,
    sharedWith: start.cells,
    complete: run !== undefined,
    avg: run ? meanAccuracy(run.avg.accuracy) : null,
    pass: run ? meanAccuracy(run.pass.accuracy) : null,
    benchmarks,
    sameBenchmark: sameBenchmark(benchmarks, cellBenchmarksOfRuns),
    seconds: run?.seconds ?? null,
  };
}
