/**
 * A whole study: validate the grid, check that every model it needs exists (before anything
 * runs), run the start runs the selected cells declare (their initial teams evaluated once), then
 * train the selected cells' runs into one store (resuming where an earlier study stopped), replay
 * one run per cell, then write the report of the whole grid from the store. With `reportOnly`
 * only the last step runs.
 */
import { join } from "node:path";
import { loadGrid, selectCells } from "./load-grid.ts";
import { MissingModelError, missingModels } from "./model-check.ts";
import { planRuns, planStarts, startsOf } from "./plan-runs.ts";
import { replaySpotChecks } from "./replay-check.ts";
import { readReplayRecords, type ReplayRecord, writeReplayRecords } from "./replay-records.ts";
import { type RunOutcome, trainGrid } from "./run-grid.ts";
import type { StudyResults } from "./study-results.ts";
import { REPLAYS_FILE, writeStudyReport } from "./write-report.ts";

/** What to run and where. */
export interface StudyOptions {
  readonly grid: string;
  /** Seeds per cell; default the grid's. */
  readonly seeds?: number;
  readonly steps?: number;
  /** Comma-separated cell ids to run (the report still covers the whole grid). */
  readonly only?: string;
  readonly device?: string;
  readonly store: string;
  readonly out: string;
  readonly reportOnly: boolean;
  readonly jobs: number;
  readonly signal?: AbortSignal;
  readonly log: (line: string) => void;
}

/** What a study did. */
export interface StudyOutcome {
  /** The start runs, then the training runs. */
  readonly runs: readonly RunOutcome[];
  readonly replays: readonly ReplayRecord[];
  /** Null when the study was interrupted before its report. */
  readonly results: StudyResults | null;
  readonly files: readonly string[];
  /** Failed runs plus replays that did not come out identical. */
  readonly failures: number;
}

/**
 * Runs the study described by `options`.
 *
 * @example
 * ```ts
 * const outcome = await runStudy({
 *   grid: "study/grid.json", store: ".polyrl/study.sqlite", out: "docs/study",
 *   reportOnly: false, jobs: 2, log: console.error,
 * });
 * ```
 */
export async function runStudy(options: StudyOptions): Promise<StudyOutcome> {
  const grid = await loadGrid(options.grid);
  const selected = selectCells(grid, options.only);
  const seeds = options.seeds ?? grid.seeds;
  const plan = await planRuns(grid.cells, {
    seeds,
    steps: options.steps,
    device: options.device,
    store: options.store,
  });
  const starts = await planStarts(grid.cells, { device: options.device, store: options.store });
  let runs: RunOutcome[] = [];
  let replays: ReplayRecord[] = [];
  if (!options.reportOnly) {
    const missing = await missingModels(grid, selected);
    if (missing.length > 0) throw new MissingModelError(missing);
    const chosen = plan.filter((r) => selected.includes(r.cell));
    const common = { store: options.store, jobs: options.jobs, signal: options.signal };
    // Start runs first: one evaluation each, so every cell's starting accuracy is in early.
    runs = await trainGrid([...startsOf(starts, selected), ...chosen], {
      ...common,
      log: options.log,
    });
    if (options.signal?.aborted) {
      options.log("study: interrupted; run the same command again to resume");
      return {
        runs,
        replays,
        results: null,
        files: [],
        failures: runs.filter((r) => !r.ok).length,
      };
    }
    const recordsFile = join(options.out, REPLAYS_FILE);
    const previous = await readReplayRecords(recordsFile);
    replays = await replaySpotChecks(chosen, { ...common, previous, log: options.log });
    const checked = new Set(replays.map((r) => r.cell));
    await Deno.mkdir(options.out, { recursive: true });
    await writeReplayRecords(recordsFile, [
      ...previous.filter((r) => !checked.has(r.cell)),
      ...replays,
    ]);
  }
  const { results, files } = await writeStudyReport({
    grid,
    plan,
    starts,
    store: options.store,
    out: options.out,
    seeds,
    steps: options.steps,
  });
  const failures = runs.filter((r) => !r.ok).length + replays.filter((r) => !r.ok).length;
  return { runs, replays, results, files, failures };
}
