/**
 * `deno task export RUN... [--format parquet|csv] [--out DIR] [--store S]`: writes every
 * documented table and view, restricted to the given runs, as one file per table.
 */
import {
  defineCommand,
  parseFormat,
  runCommand,
  storeOption,
  UsageError,
} from "../../events/cli/command.ts";
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
    format: { type: "string", default: "parquet", help: "parquet (default) or csv" },
    out: { type: "string", help: "output folder (default export-RUN, or export-N-runs)" },
  },
});

await runCommand(USAGE, async () => {
  const { values, positionals } = cli.parse(Deno.args);
  const format = parseFormat<"parquet" | "csv">(values.format, ["parquet", "csv"]);
  if (positionals.length === 0) throw new UsageError("name at least one RUN (an id or latest)");
  await using analysis = await openAnalysis(values.store, { readOnly: true });
  let runs: string[];
  try {
    runs = await resolveRuns(analysis.db, positionals);
  } catch (err) {
    if (err instanceof UnknownRunError) throw new UsageError(err.message);
    throw err;
  }
  const dir = values.out ??
    (runs.length === 1 ? `export-${runs[0]}` : `export-${runs.length}-runs`);
  await Deno.mkdir(dir, { recursive: true });
  const inRuns = runs.map(sqlString).join(", ");
  const options = format === "parquet" ? "(FORMAT parquet)" : "(FORMAT csv, HEADER true)";
  for (const table of EXPORTED) {
    const file = `${dir}/${table}.${format}`;
    const query = `SELECT * FROM ${table} WHERE run_id IN (${inRuns}) ORDER BY ALL`;
    await analysis.conn.run(`COPY (${query}) TO ${sqlString(file)} ${options}`);
    const [{ n }] = (await analysis.conn.runAndReadAll(`SELECT count(*) AS n FROM (${query})`))
      .getRowObjectsJS();
    console.log(`${file}\t${n} rows`);
  }
});
