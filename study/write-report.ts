/**
 * Builds the study report from the store alone and writes it: README.md, study.json (every
 * number), one SVG per figure. Figures of an earlier report that are no longer produced are
 * removed, so the folder always matches the page.
 */
import { join } from "node:path";
import { openAnalysis } from "../analysis/mod.ts";
import { openStore } from "../events/mod.ts";
import { type Hardware, readHardware } from "./hardware.ts";
import type { Grid } from "./load-grid.ts";
import type { PlannedRun, PlannedStart } from "./plan-runs.ts";
import { withPreviousStudy } from "./read-study-results.ts";
import { readReplayRecords } from "./replay-records.ts";
import { renderStudy } from "./render-study.ts";
import { StudyError } from "./study-error.ts";
import { studyCharts } from "./study-charts.ts";
import { loadStudyRuns } from "./study-data.ts";
import { type StudyResults, studyResults } from "./study-results.ts";

/** The file in the output folder that keeps the replay spot-checks' records. */
export const REPLAYS_FILE = "replays.json";

/** What the report covers and where it goes. */
export interface ReportOptions {
  readonly grid: Grid;
  /** The runs of every cell of the grid. */
  readonly plan: readonly PlannedRun[];
  /** The grid's start runs (planStarts); none by default. */
  readonly starts?: readonly PlannedStart[];
  readonly store: string;
  readonly out: string;
  readonly seeds: number;
  readonly steps?: number;
  /** Default: this machine's. */
  readonly hardware?: Hardware;
}

/**
 * Writes the report of `options.plan` from `options.store` into `options.out`; returns the
 * results and the files written.
 *
 * @example
 * ```ts
 * import { loadGrid, planRuns } from "./mod.ts";
 * const store = ".polyrl/study.sqlite";
 * const grid = await loadGrid("study/grid.json");
 * const plan = await planRuns(grid.cells, { seeds: 5, store });
 * const { files } = await writeStudyReport({ grid, plan, store, out: "docs/study", seeds: 5 });
 * ```
 */
export async function writeStudyReport(
  options: ReportOptions,
): Promise<{ results: StudyResults; files: string[] }> {
  const heads = await (async () => {
    await using store = await openStore(options.store, { readOnly: true });
    return new Map((await store.streams()).map((h) => [h.stream, h]));
  })();
  const starts = options.starts ?? [];
  const [runs, startRuns] = await (async () => {
    await using analysis = await openAnalysis(options.store);
    return [
      await loadStudyRuns(analysis.db, options.plan),
      await loadStudyRuns(analysis.db, starts),
    ];
  })();
  const results = studyResults({
    grid: options.grid,
    plan: options.plan,
    runs,
    starts,
    startRuns,
    replays: await readReplayRecords(join(options.out, REPLAYS_FILE)),
    heads,
    hardware: options.hardware ?? await readHardware(),
    store: options.store,
    seeds: options.seeds,
    steps: options.steps,
  });
  if (runs.length === 0) {
    throw new StudyError(
      `store ${options.store} holds none of the grid's ${options.plan.length} planned runs ` +
        `(seeds 0-${options.seeds - 1}, steps ${
          options.steps ?? "as the configs set them"
        }); run the study first, or give the --seeds/--steps/--device it ran with`,
    );
  }
  const compared = await withPreviousStudy(results, options.grid);
  return { results: compared, files: await writeReportFiles(compared, options.out) };
}

/**
 * Writes the report pages of `results` into `out` (README.md, study.json, one SVG per figure,
 * removing figures no longer produced); returns the files written.
 *
 * @example
 * ```ts
 * import { loadGrid, readStudyResults, withPower } from "./mod.ts";
 * const grid = await loadGrid("study/grid.json");
 * await writeReportFiles(withPower(await readStudyResults("old/study.json"), grid), "/tmp/re");
 * ```
 */
export async function writeReportFiles(results: StudyResults, out: string): Promise<string[]> {
  const charts = studyCharts(results);
  await Deno.mkdir(out, { recursive: true });
  const files = [join(out, "README.md"), join(out, "study.json")];
  await Deno.writeTextFile(files[0], renderStudy(results, charts, out));
  await Deno.writeTextFile(files[1], JSON.stringify(results, null, 2) + "\n");
  const current = new Set(charts.map((c) => c.file));
  for await (const entry of Deno.readDir(out)) {
    if (entry.isFile && entry.name.endsWith(".svg") && !current.has(entry.name)) {
      await Deno.remove(join(out, entry.name));
    }
  }
  for (const chart of charts) {
    const file = join(out, chart.file);
    await Deno.writeTextFile(file, chart.svg);
    files.push(file);
  }
  return files;
}
