/**
 * `deno task sql "SELECT ..." [--store S] [--format table|csv|json|parquet] [--out F]
 * [--rebuild]`: one read-only query against the projections of a store (brought up to date
 * first; with `--rebuild`, built again from the whole log). With no query, an interactive prompt
 * (sql-prompt.ts): statements end with `;`; `.help`, `.tables`, `.schema [TABLE]`,
 * `.mode table|csv|json` and `.quit`.
 *
 * Queries run on the projections opened READ_ONLY, only SELECTs pass (as DuckDB's parser reads
 * them) that call none of DuckDB's logging, profiling, parser or checkpoint functions nor run SQL
 * text (REFUSED_FUNCTIONS), and the instance is sealed first: local files can be read, but no
 * extension is installed and no setting changed. The only file this command writes is `--out`,
 * with the query's result, and `--out` may not be the store, its side files, blobs or projections
 * (events/cli/output-path.ts).
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import {
  commandExitCode,
  defineCommand,
  parseFormat,
  storeOption,
  UsageError,
} from "../../events/cli/mod.ts";
import { openAnalysis } from "../queries/open-analysis.ts";
import { formatQueryTable } from "../sql/format-query-table.ts";
import { runReadOnlyQuery, writeQueryParquet } from "../sql/run-query.ts";
import { MalformedSqlError, WriteRefusedError } from "../sql/sql-errors.ts";
import { sealDuckDB } from "../sql/seal-duckdb.ts";
import { EXPORTED } from "../projections/schema.ts";
import { sqlPrompt } from "./sql-prompt.ts";

const USAGE = 'deno task sql ["SELECT ..."] [--store PATH|URL] [--format table|csv|json|parquet] ' +
  "[--out FILE] [--rebuild]";

const cli = defineCommand({
  name: "sql",
  usage: USAGE,
  summary: `Runs one read-only SQL statement on the DuckDB projections of the event log (tables: ${
    EXPORTED.join(", ")
  }; see analysis/TABLES.md). Without a query, opens an interactive prompt.`,
  options: {
    ...storeOption,
    format: {
      type: "string",
      default: "table",
      value: "table|csv|json|parquet",
      help: "table, csv, json, or parquet (needs --out)",
    },
    out: {
      type: "string",
      value: "FILE",
      path: true,
      output: true,
      help: "write the result to this file instead of stdout",
    },
    rebuild: {
      type: "boolean",
      help: "drop the projections and build them again from the whole log first",
    },
  },
  examples: [
    `deno task sql "SELECT run_id, status, last_step FROM runs" --format csv`,
    "deno task sql --store runs.sqlite",
  ],
});

type Format = "table" | "csv" | "json" | "parquet";

async function runOne(conn: DuckDBConnection, query: string, format: Format, out?: string) {
  try {
    if (format === "parquet") {
      if (!out) throw new UsageError("--format parquet writes a file: give --out FILE");
      await writeQueryParquet(conn, query, out);
      console.error(`wrote ${out}`);
      return;
    }
    const text = formatQueryTable(await runReadOnlyQuery(conn, query), format);
    if (out) await Deno.writeTextFile(out, text.endsWith("\n") ? text : text + "\n");
    else console.log(text.replace(/\n$/, ""));
  } catch (err) {
    // A refused or malformed statement is the caller's input mistake: exit 2, not a failed run.
    if (err instanceof WriteRefusedError) throw new UsageError(err.message);
    if (err instanceof MalformedSqlError) {
      const hint = /Catalog Error/.test(err.message)
        ? `\nanalysis tables: ${EXPORTED.join(", ")} (see analysis/TABLES.md)`
        : "";
      throw new UsageError(err.message + hint);
    }
    throw err;
  }
}

/** `deno task sql ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(USAGE, async () => {
    const { values, positionals } = cli.parse(args);
    const format = parseFormat<Format>(values.format, ["table", "csv", "json", "parquet"]);
    if (positionals.length > 1) {
      throw new UsageError(
        `give the query as one quoted argument; got ${positionals.length} arguments`,
      );
    }
    await using analysis = await openAnalysis(values.store, { rebuild: values.rebuild });
    await sealDuckDB(analysis.conn, { files: "read" });
    if (positionals.length === 0) {
      if (format === "parquet") {
        throw new UsageError("--format parquet needs a query and --out FILE");
      }
      const conn = analysis.conn;
      return await sqlPrompt(conn, {
        mode: format,
        run: (query, mode) => runOne(conn, query, mode),
      });
    }
    await runOne(analysis.conn, positionals[0], format, values.out);
  });

if (import.meta.main) Deno.exit(await main(Deno.args));
