/**
 * `deno task sql "SELECT ..." [--store S] [--format table|csv|json|parquet] [--out F]
 * [--rebuild]`: one read-only query against the projections of a store (brought up to date
 * first; with `--rebuild`, built again from the whole log). With no query,
 * an interactive prompt: statements end with `;`, `.tables` lists tables, `.quit` leaves.
 *
 * Queries run on the projections opened READ_ONLY, only SELECTs pass (as DuckDB's parser reads
 * them), and the instance is sealed first: local files can be read, but no extension is installed
 * and no setting changed. The only file this command writes is `--out`, with the query's result.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import {
  defineCommand,
  parseFormat,
  runCommand,
  storeOption,
  UsageError,
} from "../../events/cli/command.ts";
import { openAnalysis } from "../queries/open-analysis.ts";
import { formatQueryTable } from "../sql/format-query-table.ts";
import { runReadOnlyQuery, writeQueryParquet } from "../sql/run-query.ts";
import { MalformedSqlError, WriteRefusedError } from "../sql/sql-errors.ts";
import { sealDuckDB } from "../sql/seal-duckdb.ts";
import { EXPORTED } from "../projections/schema.ts";

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
      help: "table, csv, json, or parquet (needs --out)",
    },
    out: { type: "string", help: "write the result to this file instead of stdout" },
    rebuild: {
      type: "boolean",
      help: "drop the projections and build them again from the whole log first",
    },
  },
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

/** Lines of standard input, whether a terminal or a pipe (Deno's prompt() needs a terminal). */
async function* stdinLines(): AsyncGenerator<string> {
  let rest = "";
  for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
    const parts = (rest + chunk).split("\n");
    rest = parts.pop() ?? "";
    yield* parts;
  }
  if (rest) yield rest;
}

async function interactive(conn: DuckDBConnection): Promise<void> {
  const terminal = Deno.stdin.isTerminal();
  const show = (p: string) => terminal && Deno.stdout.writeSync(new TextEncoder().encode(p));
  if (terminal) {
    console.log(`polyrl sql: statements end with ';'. .tables lists tables, .quit leaves.`);
  }
  let buffer = "";
  show("polyrl> ");
  for await (const line of stdinLines()) {
    const trimmed = line.trim();
    if (!buffer && trimmed === ".quit") return;
    if (!buffer && trimmed === ".tables") {
      console.log(EXPORTED.join("\n"));
    } else if (buffer || trimmed) {
      buffer += (buffer ? "\n" : "") + line;
      if (trimmed.endsWith(";")) {
        const query = buffer;
        buffer = "";
        try {
          await runOne(conn, query, "table");
        } catch (err) {
          console.error(`error: ${(err as Error).message}`);
        }
      }
    }
    show(buffer ? "   ...> " : "polyrl> ");
  }
}

await runCommand(USAGE, async () => {
  const { values, positionals } = cli.parse(Deno.args);
  const format = parseFormat<Format>(values.format, ["table", "csv", "json", "parquet"]);
  if (positionals.length > 1) {
    throw new UsageError(
      `give the query as one quoted argument; got ${positionals.length} arguments`,
    );
  }
  await using analysis = await openAnalysis(values.store, {
    readOnly: true,
    rebuild: values.rebuild,
  });
  await sealDuckDB(analysis.conn, { files: "read" });
  if (positionals.length === 0) return await interactive(analysis.conn);
  await runOne(analysis.conn, positionals[0], format, values.out);
});
