/**
 * `deno task study`: runs the reproduction study declared in study/grid.json (every cell's config
 * for every seed, into one store; finished runs are skipped, so a stopped study resumes), replays
 * one run per cell, and writes the report (docs/study/README.md, study.json, SVG figures) from
 * the event log alone. `--report-only` rebuilds the report from an existing store.
 */
import {
  commandExitCode,
  defineCommand,
  ExitCode,
  listenForSignal,
  storeOption,
  UsageError,
} from "../../events/cli/mod.ts";
import { DEVICES } from "../../engine/config/mod.ts";
import { GridError } from "../grid-error.ts";
import { withPower, withPreviousStudy } from "../read-study-results.ts";
import { runStudy } from "../run-study.ts";
import { writeReportFiles } from "../write-report.ts";
import { countOption } from "./count-option.ts";
import { gridFromOption, gridOption } from "./grid-option.ts";
import { estimateCommand } from "./estimate-command.ts";
import { powerCommand, readResults } from "./power-command.ts";

const USAGE =
  "deno task study power [--help] | deno task study estimate [--help] | deno task study [--seeds N] [--steps N] [--only CELL[,CELL...]] [--out DIR] " +
  "[--store PATH|postgres://URL] [--device auto|cpu|wasm|webgpu|webgpu-web] [--jobs N] [--grid FILE] " +
  "[--report-only [--from STUDY.JSON]]";

const cli = defineCommand({
  name: "study",
  usage: USAGE,
  summary: "Runs the study grid (configs under study/), replays one run per cell and writes the " +
    "report with its figures, computed from the event log alone.",
  options: {
    grid: gridOption("grid file"),
    seeds: {
      type: "string",
      value: "N",
      help: "seeds per cell, 0 .. N-1 (default: the grid's seeds)",
    },
    steps: { type: "string", value: "N", help: "override every cell's training steps" },
    only: { type: "string", value: "CELL,...", help: "run only these cells (comma-separated ids)" },
    out: {
      type: "string",
      default: "docs/study",
      value: "DIR",
      path: true,
      output: true,
      help: "report folder (default docs/study)",
    },
    store: {
      ...storeOption.store,
      default: ".polyrl/study.sqlite",
      help: "event store of the study's runs (default .polyrl/study.sqlite)",
    },
    device: {
      type: "string",
      value: "auto|cpu|wasm|webgpu|webgpu-web",
      help: "override every cell's runtime device: auto, cpu, wasm, webgpu, webgpu-web",
    },
    jobs: {
      type: "string",
      value: "N",
      help: "runs at a time, each single-threaded (default: the number of cores)",
    },
    "report-only": {
      type: "boolean",
      default: false,
      help: "rebuild the report from the store without running anything",
    },
    from: {
      type: "string",
      value: "FILE",
      path: true,
      help: "with --report-only: rebuild the report from this study.json instead of the store " +
        "(each claim's power recomputed with the grid's paper effects)",
    },
  },
  allowPositionals: false,
  examples: [
    "deno task study --only refine-grpo,refine-drmas --seeds 2 --steps 4 --out /tmp/study",
    "deno task study --report-only",
    "deno task study --report-only --from docs/study/v2/study.json --out /tmp/study-v2",
    "deno task study power --seeds 10 --validation 64   (power of the grid's claims; --help)",
    "deno task study estimate --jobs 2   (the grid's wall time from short runs; --help)",
  ],
});

/** `deno task study ARGS` in this process; resolves to its exit code. */
export function main(args: string[]): Promise<number> {
  if (args[0] === "power") return powerCommand(args.slice(1));
  if (args[0] === "estimate") return estimateCommand(args.slice(1));
  return commandExitCode(USAGE, async () => {
    const { values } = cli.parse(args);
    const device = values.device;
    if (device !== undefined && !(DEVICES as readonly string[]).includes(device)) {
      throw new UsageError(`--device must be one of ${DEVICES.join(", ")}; got ${device}`);
    }
    const reportOnly = values["report-only"] === true;
    if (reportOnly && values.only !== undefined) {
      throw new UsageError("--only selects cells to run; the report always covers the whole grid");
    }
    if (values.from !== undefined) {
      if (!reportOnly) {
        throw new UsageError("--from rebuilds the report from a study.json; add --report-only");
      }
      const grid = await gridFromOption(values.grid);
      const results = withPower(await readResults(values.from), grid);
      const files = await writeReportFiles(
        await withPreviousStudy(results, grid, values.from),
        values.out,
      );
      console.log(`report: ${files.join(", ")}`);
      return ExitCode.ok;
    }
    const interrupt = new AbortController();
    using _ctrlC = listenForSignal("SIGINT", () => {
      if (interrupt.signal.aborted) Deno.exit(ExitCode.interrupted);
      console.error("study: stopping after the runs in progress (Ctrl-C again to quit now)");
      interrupt.abort();
    });
    let outcome;
    try {
      outcome = await runStudy({
        grid: values.grid,
        seeds: countOption("seeds", values.seeds, 1),
        steps: countOption("steps", values.steps, 1),
        only: values.only,
        device,
        store: values.store,
        out: values.out,
        reportOnly,
        jobs: countOption("jobs", values.jobs, 1) ?? navigator.hardwareConcurrency,
        signal: interrupt.signal,
        log: (line) => console.error(line),
      });
    } catch (err) {
      if (err instanceof GridError) throw new UsageError(err.message);
      throw err;
    }
    const count = (action: string) => outcome.runs.filter((r) => r.action === action).length;
    if (!reportOnly) {
      console.log(
        `runs: ${count("trained")} trained, ${count("resumed")} resumed, ${count("skipped")} ` +
          `already complete, ${outcome.runs.filter((r) => !r.ok).length} failed or not started`,
      );
      console.log(
        `replays: ${outcome.replays.filter((r) => r.ok).length} of ${outcome.replays.length} ` +
          `identical`,
      );
    }
    for (const run of outcome.runs.filter((r) => r.error !== null)) {
      console.error(`run ${run.runId} failed:\n${run.error}`);
    }
    if (outcome.results) {
      const claims = outcome.results.comparisons.flatMap((c) => c.claims);
      const verdicts = [...new Set(claims.map((c) => c.verdict))]
        .map((v) => `${claims.filter((c) => c.verdict === v).length} ${v}`);
      console.log(`report: ${outcome.files.join(", ")}`);
      console.log(`claims: ${verdicts.length ? verdicts.join(", ") : "none declared"}`);
    }
    return outcome.failures > 0 || outcome.results === null ? ExitCode.failedCheck : ExitCode.ok;
  });
}

if (import.meta.main) Deno.exit(await main(Deno.args));
