/**
 * `deno task report [RUN...] [--where SQL] [--status S] [--kind K] [--name PATTERN]
 * [--group-by KEY] [--baseline SELECTOR] [--format md|csv|json]`: the papers' tables for runs
 * grouped by a config key across seeds.
 */
import { join } from "node:path";
import {
  commandExitCode,
  DEFAULT_STORE,
  defineCommand,
  parseFormat,
  refuseStoreOutput,
  storeOption,
  UsageError,
  userPath,
} from "../../events/cli/mod.ts";
import { SPIKE_MULTIPLE } from "../stats/mod.ts";
import { openAnalysis } from "../queries/open-analysis.ts";
import { resolveRuns, UnknownRunError } from "../queries/resolve-runs.ts";
import {
  NoRunsSelectedError,
  parseSelection,
  RUN_STATUSES,
  RunSelectionError,
  SELECTION_COLUMNS,
  selectRuns,
} from "../queries/run-selection.ts";
import { loadRunSummaries } from "../queries/run-summaries.ts";
import { sealDuckDB } from "../sql/seal-duckdb.ts";
import {
  buildReport,
  renderReport,
  type Report,
  reportCsvTables,
  ReportError,
  type ReportFormat,
} from "../report/mod.ts";

/** Where `--format csv` writes its files when no `--out` is given. */
const DEFAULT_CSV_DIR = "report-csv";

const USAGE = "deno task report [RUN...] [--where SQL] [--status S,...|all] " +
  "[--kind training|eval|all] [--name PATTERN] [--hidden] [--group-by KEY] " +
  "[--baseline VALUE|KEY=VALUE] " +
  "[--metric avg@k|pass@k] [--format md|csv|json] [--out FILE|DIR] [--store PATH|URL]";

const cli = defineCommand({
  name: "report",
  usage: USAGE,
  summary: "Groups runs by a config key across seeds and prints accuracy mean ± SEM per " +
    "benchmark and k, each group against the baseline (difference, 95% CI, Welch p; paired " +
    "over seeds, and problem by problem where both were graded on the same problems), the " +
    "pairwise matrix, stability, critic and cost tables. Runs are the ids named (or `latest`), " +
    "narrowed by the filters given; with no run named, the completed training runs that pass " +
    "the filters.",
  options: {
    ...storeOption,
    where: {
      type: "string",
      value: "SQL",
      help: `a boolean SQL expression over ${SELECTION_COLUMNS}; read-only, as deno task sql`,
    },
    status: {
      type: "string",
      value: "S,...|all",
      help: `statuses (${RUN_STATUSES.join(", ")}) or all (default completed when no run is ` +
        "named)",
    },
    kind: {
      type: "string",
      value: "training|eval|all",
      help: "training runs or eval runs (default training when no run is named)",
    },
    name: {
      type: "string",
      value: "PATTERN",
      help: "with *, ? or [...] a glob matched against the whole run name (config name) or id, " +
        "else a case-insensitive substring of either",
    },
    hidden: {
      type: "boolean",
      help: "include runs hidden with `deno task runs hide` (left out by default when no run is " +
        "named)",
    },
    "group-by": {
      type: "string",
      default: "estimator",
      value: "KEY",
      help: "config key to group runs by (default estimator)",
    },
    baseline: {
      type: "string",
      value: "VALUE|KEY=VALUE",
      help: "group to compare against (default: first group)",
    },
    format: {
      type: "string",
      default: "md",
      value: "md|csv|json",
      help: "Markdown tables (default), one CSV per table in a folder (--out), or JSON",
    },
    metric: {
      type: "string",
      default: "avg@k",
      value: "avg@k|pass@k",
      help: "accuracy per benchmark (default avg@k), k = samples per problem",
    },
    out: {
      type: "string",
      value: "FILE|DIR",
      path: true,
      output: true,
      help: `write md or json to FILE instead of stdout; csv: the folder of the CSV files ` +
        `(default ${DEFAULT_CSV_DIR} in the current directory)`,
    },
    "spike-multiple": {
      type: "string",
      default: String(SPIKE_MULTIPLE),
      value: "X",
      help: `grad-norm spike threshold, × running median (default ${SPIKE_MULTIPLE})`,
    },
  },
  examples: [
    "deno task report",
    `deno task report --where "seed < 3 AND config['steps']::INTEGER >= 100" --baseline grpo`,
    "deno task report --name 'sweep-*' --status completed,interrupted --format csv --out tables",
  ],
});

function parseBaseline(selector: string | undefined, groupBy: string): string | undefined {
  if (selector === undefined) return undefined;
  const eq = selector.indexOf("=");
  if (eq < 0) return selector;
  const key = selector.slice(0, eq);
  if (key !== groupBy) {
    throw new UsageError(
      `--baseline ${selector} names key ${key} but runs are grouped by ${groupBy}`,
    );
  }
  return selector.slice(eq + 1);
}

/**
 * Writes one CSV per table into `dir` (created if missing); returns the paths written. The folder
 * and every file are checked against `stores` before the first is written (refuseStoreOutput).
 */
async function writeCsvTables(
  report: Report,
  dir: string,
  stores: readonly string[],
): Promise<string[]> {
  const existing = await Deno.stat(dir).catch(() => null);
  if (existing && !existing.isDirectory) {
    throw new UsageError(
      `--out ${dir} is a file, but --format csv writes one file per table into a folder; name ` +
        "a folder (it is created if missing)",
    );
  }
  refuseStoreOutput(dir, stores);
  const tables = reportCsvTables(report).map(({ name, csv }) => ({
    path: join(dir, `${name}.csv`),
    csv,
  }));
  for (const { path } of tables) refuseStoreOutput(path, stores);
  await Deno.mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const { path, csv } of tables) {
    await Deno.writeTextFile(path, csv);
    written.push(path);
  }
  return written;
}

/** `deno task report ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(USAGE, async () => {
    const { values, positionals } = cli.parse(args);
    const format = parseFormat<ReportFormat>(values.format, ["md", "csv", "json"]);
    const metric = values.metric;
    if (metric !== "avg@k" && metric !== "pass@k") {
      throw new UsageError(`--metric must be avg@k or pass@k; got ${metric}`);
    }
    const groupBy = values["group-by"];
    const spikeMultiple = Number(values["spike-multiple"]);
    if (!(spikeMultiple > 0)) {
      throw new UsageError(
        `--spike-multiple must be a number > 0; got ${values["spike-multiple"]}`,
      );
    }
    const baseline = parseBaseline(values.baseline, groupBy);
    await using analysis = await openAnalysis(values.store);
    // The --where predicate is user SQL: the instance is sealed as deno task sql's is.
    await sealDuckDB(analysis.conn, { files: "read" });
    let report: Report;
    try {
      const named = positionals.length > 0 ? await resolveRuns(analysis.db, positionals) : [];
      const selection = parseSelection(values, named);
      const ids = await selectRuns(analysis.conn, selection);
      report = buildReport(await loadRunSummaries(analysis.db, ids, metric), {
        groupBy,
        baseline,
        spikeMultiple,
        metric,
      });
    } catch (err) {
      if (
        err instanceof UnknownRunError || err instanceof ReportError ||
        err instanceof RunSelectionError || err instanceof NoRunsSelectedError
      ) {
        throw new UsageError(err.message);
      }
      throw err;
    }
    // A named baseline that no selected run has is a typo or a selection that left it out; a
    // report that quietly compared nothing would hide it.
    if (baseline !== undefined && !report.groups.some((g) => g.value === baseline)) {
      throw new UsageError(
        `--baseline: ${report.vsBaselineEmpty}; name one of them, or select runs of ` +
          `${groupBy}=${baseline}`,
      );
    }
    if (format === "csv") {
      const written = await writeCsvTables(report, values.out ?? userPath(DEFAULT_CSV_DIR), [
        values.store,
        DEFAULT_STORE,
      ]);
      console.error(`wrote ${written.length} CSV files:`);
      console.log(written.join("\n"));
      return;
    }
    const text = renderReport(report, format);
    if (values.out) await Deno.writeTextFile(values.out, text);
    else console.log(text.replace(/\n$/, ""));
  });

if (import.meta.main) Deno.exit(await main(Deno.args));
