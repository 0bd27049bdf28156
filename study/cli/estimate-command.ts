/**
 * `deno task study estimate`: the grid's wall time before it runs. Each selected cell trains once,
 * cut to `--steps` (seed 0, one run at a time so each has a core), into a temporary store (or
 * `--store`); each run's time is split by its events and scaled to the cell's full length
 * (study/grid-time.ts), and the grid's total counts every seed, one replay per cell and the runs
 * `--jobs` at a time.
 */
import {
  commandExitCode,
  defineCommand,
  ExitCode,
  formatOption,
  parseFormat,
  storeOption,
  textTable,
  toCsv,
} from "../../events/cli/mod.ts";
import { openStore } from "../../events/mod.ts";
import { runScript } from "../child-task.ts";
import { formatDuration } from "../format-duration.ts";
import { countOption } from "./count-option.ts";
import { gridFromOption, gridOption } from "./grid-option.ts";
import {
  type CellEstimate,
  cellEstimate,
  gridEstimate,
  runTiming,
  type TimedEvent,
} from "../grid-time.ts";
import { selectCells } from "../load-grid.ts";
import { MissingModelError, missingModels } from "../model-check.ts";

const TRAIN = new URL("../../engine/cli/train.ts", import.meta.url);

const USAGE = "deno task study estimate [--grid FILE] [--only CELL[,CELL...]] [--steps N] " +
  "[--seeds N] [--jobs N] [--store PATH] [--format table|json|csv]";

const cli = defineCommand({
  name: "study estimate",
  usage: USAGE,
  summary: "The grid's wall time before it runs: each cell trained once for a few steps, its " +
    "time split by its events (start-up, steps, evaluations) and scaled to the cell's full " +
    "length, then summed over the seeds, one replay per cell and the jobs that run at once.",
  options: {
    grid: gridOption("grid to estimate"),
    only: { type: "string", value: "CELL,...", help: "measure only these cells" },
    steps: {
      type: "string",
      default: "2",
      value: "N",
      help: "steps of each measured run (default 2: the first step also loads the train step)",
    },
    seeds: { type: "string", value: "N", help: "seeds per cell (default: the grid's)" },
    jobs: {
      type: "string",
      value: "N",
      help: "runs at a time in the study, each single-threaded (default: the number of cores)",
    },
    store: {
      ...storeOption.store,
      default: undefined,
      value: "PATH",
      help: "keep the measured runs in this SQLite store (default: a temporary one, removed)",
    },
    ...formatOption,
  },
  allowPositionals: false,
  examples: [
    "deno task study estimate",
    "deno task study estimate --only refine-grpo,debate-mada --seeds 10 --jobs 2",
  ],
});

async function runEvents(store: string, runId: string): Promise<TimedEvent[]> {
  await using s = await openStore(store, { readOnly: true });
  const out: TimedEvent[] = [];
  for await (const e of s.readStream(runId)) out.push(e);
  return out;
}

const seconds = (x: number) => Number(x.toFixed(1));

/** `deno task study estimate ARGS` (the arguments after `estimate`); resolves to the exit code. */
export function estimateCommand(args: readonly string[]): Promise<number> {
  return commandExitCode(USAGE, async () => {
    const { values } = cli.parse([...args]);
    const format = parseFormat(values.format);
    const steps = countOption("steps", values.steps, 1)!;
    const { grid, cells } = await gridFromOption(
      values.grid,
      (grid) => ({ grid, cells: selectCells(grid, values.only) }),
    );
    const seeds = countOption("seeds", values.seeds, 1) ?? grid.seeds;
    const jobs = countOption("jobs", values.jobs, 1) ?? (navigator.hardwareConcurrency || 1);
    const missing = await missingModels(grid, cells);
    if (missing.length > 0) throw new MissingModelError(missing);

    const dir = values.store === undefined
      ? await Deno.makeTempDir({ prefix: "polyrl-estimate-" })
      : null;
    const store = values.store ?? `${dir}/estimate.sqlite`;
    const estimates: CellEstimate[] = [];
    try {
      for (const cell of cells) {
        const runId = `estimate-${cell.id}-${crypto.randomUUID().slice(0, 8)}`;
        const args = ["--config", cell.configPath, "--steps", String(steps), "--seed", "0"];
        console.error(`estimate: ${cell.id}, ${steps} steps`);
        const start = performance.now();
        const child = await runScript(TRAIN, [...args, "--run-id", runId, "--store", store]);
        const processSeconds = (performance.now() - start) / 1000;
        if (child.code !== 0) {
          throw new Error(
            `cell ${cell.id}: deno task train ${args.join(" ")} exited ${child.code}:\n` +
              child.stderrTail.join("\n"),
          );
        }
        const timing = runTiming(runId, await runEvents(store, runId), processSeconds);
        estimates.push(cellEstimate(cell.id, cell.config, timing));
      }
    } finally {
      if (dir !== null) await Deno.remove(dir, { recursive: true });
    }
    // One start run per start the cells declare, timed as the measured cell whose config it runs
    // (or, outside --only, as the first measured cell that shares it: the same initial team).
    const startEstimates = new Map<string, CellEstimate>();
    for (const cell of cells) {
      if (cell.start === undefined || startEstimates.has(cell.start)) continue;
      const owner = cells.some((c) => c.id === cell.start) ? cell.start : cell.id;
      startEstimates.set(cell.start, estimates.find((e) => e.cell === owner)!);
    }
    const total = gridEstimate(estimates, seeds, jobs, [...startEstimates.values()]);

    if (format === "json") {
      console.log(JSON.stringify(total, null, 2));
      return ExitCode.ok;
    }
    const rows = total.cells.map((c) => [
      c.cell,
      seconds(c.measured.fixed),
      c.measured.steps.map(seconds).join(" + "),
      c.measured.evaluations.map(seconds).join(" + "),
      c.steps,
      c.evaluations,
      seconds(c.run),
    ]);
    const header = [
      "cell",
      "fixed (s)",
      "measured steps (s)",
      "evaluations (s)",
      "full steps",
      "full evaluations",
      "full run (s)",
    ];
    if (format === "csv") {
      console.log(toCsv(header, rows));
      return ExitCode.ok;
    }
    console.log(textTable(header, rows));
    console.log(
      `${cells.length} cells x ${seeds} seeds: ${formatDuration(total.training)} of runs, ` +
        `${formatDuration(total.replays)} of replays (one per cell)` +
        (startEstimates.size > 0
          ? `, ${formatDuration(total.starts)} of ${startEstimates.size} start runs`
          : "") +
        `; at ${jobs} jobs: ` +
        `${formatDuration(total.wall)} of wall time if the jobs keep every core busy`,
    );
    return ExitCode.ok;
  });
}
