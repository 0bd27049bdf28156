/**
 * `deno task study power`: the power analysis of a grid before it runs. For every claim of the
 * grid, from the per-seed values of an earlier study (its study.json), the smallest difference
 * the grid detects at its seeds and evaluation sizes (or those given), the power at the paper's
 * effect and the seeds per cell that effect needs, for Welch's test and, where the two cells'
 * runs pair by seed, for the paired t-test on the per-seed differences; so seeds and validation
 * sizes are chosen before the results exist.
 */
import {
  commandExitCode,
  defineCommand,
  formatOption,
  parseFormat,
  textTable,
  toCsv,
  UsageError,
} from "../../events/cli/mod.ts";
import { relative } from "node:path";
import { countOption } from "./count-option.ts";
import { gridFromOption, gridOption } from "./grid-option.ts";
import { planPower, type PowerRow } from "../plan-power.ts";
import {
  MissingResultsError,
  previousResultsFile,
  readStudyResults,
} from "../read-study-results.ts";
import { POWER_PLAN_COLUMNS, POWER_PLAN_LEGEND, powerPlanRow } from "../power-plan-table.ts";

const USAGE = "deno task study power [--grid FILE] [--from FILE] [--seeds N] [--validation N] " +
  "[--samples K] [--format table|json|csv]";

const cli = defineCommand({
  name: "study power",
  usage: USAGE,
  summary: "The power of every claim of a grid before it runs: the smallest difference its " +
    "seeds and validation sizes detect (two-sided Welch test, the grid's alpha and power), " +
    "the power at the paper's effect and the seeds that effect needs, from the per-seed " +
    "spread of an earlier study's results; beside them the same for the paired t-test where " +
    "the two cells' runs pair by seed (from the spread of the per-seed differences).",
  options: {
    grid: gridOption("grid to plan"),
    from: {
      type: "string",
      value: "FILE",
      path: true,
      help: "earlier study's results with the per-seed values (default: the grid's previous " +
        "study, else docs/study/study.json)",
    },
    seeds: { type: "string", value: "N", help: "seeds per cell (default: the grid's)" },
    validation: {
      type: "string",
      value: "N",
      help: "problems each run's final evaluation averages over, every cell (default: configs')",
    },
    samples: {
      type: "string",
      value: "K",
      help: "samples per problem (the k of avg@k), every cell (default: the configs')",
    },
    ...formatOption,
  },
  allowPositionals: false,
  examples: [
    "deno task study power",
    "deno task study power --seeds 10 --validation 64",
    "deno task study power --grid study/grid.json --from docs/study/study.json --format json",
  ],
});

const CSV_COLUMNS = [
  "comparison",
  "cell",
  "against",
  "agent",
  "metric",
  "expect",
  "seeds",
  "alpha",
  "power",
  "sd_cell",
  "sd_reference",
  "mde",
  "mde_low",
  "paper_effect",
  "power_at_paper",
  "seeds_needed",
  "note",
  "paired",
  "correlation",
  "sd_difference",
  "paired_mde",
  "paired_mde_low",
  "paired_power_at_paper",
  "paired_seeds_needed",
  "paired_note",
];

function csvRow(r: PowerRow): unknown[] {
  const p = r.power;
  return [
    r.comparison,
    r.cell,
    r.against,
    r.agent,
    r.metric,
    r.expect,
    p.seeds,
    p.alpha,
    p.power,
    p.spread[0]?.sd ?? null,
    p.spread[1]?.sd ?? null,
    p.mde,
    p.mdeLow,
    p.paperEffect,
    p.powerAtPaper,
    p.seedsNeeded,
    p.note,
    (p.paired ?? null) !== null,
    p.paired?.correlation ?? null,
    p.paired?.sd ?? null,
    p.paired?.mde ?? null,
    p.paired?.mdeLow ?? null,
    p.paired?.powerAtPaper ?? null,
    p.paired?.seedsNeeded ?? null,
    p.paired?.note ?? null,
  ];
}

/** Reads a study.json named on the command line: an unreadable file is a usage error (exit 2). */
export async function readResults(file: string) {
  try {
    return await readStudyResults(file);
  } catch (err) {
    if (err instanceof MissingResultsError) throw new UsageError(err.message);
    throw err;
  }
}

/** `deno task study power ARGS` (the arguments after `power`); resolves to the exit code. */
export function powerCommand(args: readonly string[]): Promise<number> {
  return commandExitCode(USAGE, async () => {
    const { values } = cli.parse([...args]);
    const format = parseFormat(values.format);
    const plan = {
      seeds: countOption("seeds", values.seeds, 2),
      problems: countOption("validation", values.validation, 1),
      samples: countOption("samples", values.samples, 1),
    };
    const grid = await gridFromOption(values.grid);
    const previous = previousResultsFile(grid);
    const from = values.from ??
      (previous === null ? "docs/study/study.json" : relative(Deno.cwd(), previous));
    const rows = planPower(grid, await readResults(from), plan);
    if (format === "json") {
      console.log(JSON.stringify(
        {
          kind: "study-power",
          grid: values.grid,
          from,
          alpha: grid.alpha,
          power: grid.power,
          seeds: plan.seeds ?? grid.seeds,
          claims: rows,
        },
        null,
        2,
      ));
    } else if (format === "csv") {
      Deno.stdout.writeSync(new TextEncoder().encode(toCsv(CSV_COLUMNS, rows.map(csvRow))));
    } else {
      console.log(
        `Power of ${grid.file}'s claims at α = ${grid.alpha}, power ${grid.power}, from the ` +
          `per-seed values in ${from}. ${POWER_PLAN_LEGEND}`,
      );
      console.log(textTable(POWER_PLAN_COLUMNS, rows.map(powerPlanRow)));
    }
  });
}
