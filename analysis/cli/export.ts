/**
 * `deno task export RUN... [--format parquet|csv] [--out DIR] [--store S]`: writes every
 * documented table and view, restricted to the given runs, as one file per table. Without
 * `--out` the folder is `export-<id>` in the working directory, `<id>` made a safe name
 * (runIdSlug) whatever the stored run id holds, so a run id can never steer the files elsewhere.
 */
import { dirname, resolve } from "node:path";
import {
  commandExitCode,
  DEFAULT_STORE,
  defineCommand,
  invocationDir,
  parseFormat,
  refuseStoreOutput,
  storeOption,
  UsageError,
  userPath,
} from "../../events/cli/mod.ts";
import { runIdSlug } from "../../events/mod.ts";
import { EXPORTED } from "../projections/schema.ts";
import { openAnalysis } from "../queries/open-analysis.ts";
import { resolveRuns, UnknownRunError } from "../queries/resolve-runs.ts";
import { sqlString } from "../sql/run-query.ts";

const USAGE = "deno task export RUN... [--format parquet|csv] [--out DIR] [--store PATH|URL]";

const cli = defineCommand({
  name: "export",
  usage: USAGE,
  summary: `Writes the analysis tables (${EXPORTED.join(", ")}) of the given runs (ids or ` +
    "`latest`) as Parquet or CSV files, one per table.",
  options: {
    ...storeOption,
    format: {
      type: "string",
      default: "parquet",
      value: "parquet|csv",
      help: "parquet (default) or csv",
    },
    out: {
      type: "string",
      value: "DIR",
      path: true,
      output: true,
      help: "output folder (default export-RUN, or export-N-runs, in the working directory)",
    },
  },
  examples: ["deno task export latest --format csv --out /tmp/latest-run"],
});

/** `deno task export ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(USAGE, async () => {
    const { values, positionals } = cli.parse(args);
    const format = parseFormat<"parquet" | "csv">(values.format, ["parquet", "csv"]);
    if (positionals.length === 0) throw new UsageError("name at least one RUN (an id or latest)");
    await using analysis = await openAnalysis(values.store);
    let runs: string[];
    try {
      runs = await resolveRuns(analysis.db, positionals);
    } catch (err) {
      if (err instanceof UnknownRunError) throw new UsageError(err.message);
      throw err;
    }
    const dir = values.out ?? defaultFolder(runs);
    // --out itself was checked as it was parsed; the default folder and every file are checked
    // here, all before the first is written.
    const stores = [values.store, DEFAULT_STORE];
    refuseStoreOutput(dir, stores);
    const files = EXPORTED.map((table) => `${dir}/${table}.${format}`);
    for (const file of files) refuseStoreOutput(file, stores);
    await Deno.mkdir(dir, { recursive: true });
    const inRuns = runs.map(sqlString).join(", ");
    const options = format === "parquet" ? "(FORMAT parquet)" : "(FORMAT csv, HEADER true)";
    for (const [i, table] of EXPORTED.entries()) {
      const file = files[i];
      const query = `SELECT * FROM ${table} WHERE run_id IN (${inRuns}) ORDER BY ALL`;
      await analysis.conn.run(`COPY (${query}) TO ${sqlString(file)} ${options}`);
      const [{ n }] = (await analysis.conn.runAndReadAll(`SELECT count(*) AS n FROM (${query})`))
        .getRowObjectsJS();
      console.log(`${file}\t${n} rows`);
    }
  });

if (import.meta.main) Deno.exit(await main(Deno.args));

/**
 * The default output folder: one folder right inside the directory the user ran the task from,
 * named from the run id made safe; resolved and checked to stay there.
 */
function defaultFolder(runs: readonly string[]): string {
  const name = runs.length === 1 ? `export-${runIdSlug(runs[0])}` : `export-${runs.length}-runs`;
  const cwd = resolve(invocationDir() ?? ".");
  if (dirname(resolve(cwd, name)) !== cwd) {
    throw new Error(`export folder ${JSON.stringify(name)} would leave ${cwd}; give --out DIR`);
  }
  return userPath(name);
}
