/**
 * The interactive prompt of `deno task sql`: SQL statements ending with `;` (over several lines
 * if need be) and dot commands, `.help`, `.tables`, `.schema [TABLE]`, `.mode table|csv|json`,
 * `.quit`. It reads standard input whether it is a terminal or a pipe, so a script can feed it.
 *
 * @example
 * ```ts
 * import type { DuckDBConnection } from "@duckdb/node-api";
 * import { sqlPrompt } from "./sql-prompt.ts";
 * import type { QueryTextFormat } from "../sql/format-query-table.ts";
 * declare const conn: DuckDBConnection;
 * declare function runOne(conn: DuckDBConnection, query: string, mode: QueryTextFormat): Promise<void>;
 *
 * await sqlPrompt(conn, { mode: "table", run: (query, mode) => runOne(conn, query, mode) });
 * ```
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { EXPORTED } from "../projections/schema.ts";
import { formatQueryTable, type QueryTextFormat } from "../sql/format-query-table.ts";
import { runReadOnlyQuery, sqlString } from "../sql/run-query.ts";

const MODES: readonly QueryTextFormat[] = ["table", "csv", "json"];

/** How the prompt runs a statement, and the output format it starts in. */
export interface SqlPromptOptions {
  readonly mode: QueryTextFormat;
  /** Runs one statement and prints its result in `mode`; a thrown error is printed, not fatal. */
  readonly run: (query: string, mode: QueryTextFormat) => Promise<void>;
}

/** A dot command the user got wrong: printed as an error, and the prompt goes on. */
class DotCommandError extends Error {
  override name = "DotCommandError";
}

function helpText(mode: QueryTextFormat): string {
  return [
    "statements end with ';' and may span lines; the dot commands:",
    "  .help                  this list",
    `  .tables                the analysis tables (${EXPORTED.length}; see analysis/TABLES.md)`,
    "  .schema [TABLE]        columns and types of TABLE, or of every analysis table",
    `  .mode table|csv|json   output format of the statements that follow (now ${mode})`,
    "  .quit                  leave (so does the end of input)",
  ].join("\n");
}

// information_schema rather than DESCRIBE: the table name is a bound string literal, never an
// identifier spliced into the statement.
async function schema(
  conn: DuckDBConnection,
  table: string | undefined,
  mode: QueryTextFormat,
): Promise<string> {
  const names = table === undefined ? EXPORTED : [table];
  const result = await runReadOnlyQuery(
    conn,
    `SELECT table_name AS "table", column_name AS "column", data_type AS "type"
     FROM information_schema.columns
     WHERE table_name IN (${names.map(sqlString).join(", ")})
     ORDER BY table_name, ordinal_position`,
  );
  if (result.rows.length === 0) {
    throw new DotCommandError(`no table ${table}; .tables lists the analysis tables`);
  }
  return formatQueryTable(result, mode);
}

function parseMode(arg: string): QueryTextFormat {
  if (!(MODES as readonly string[]).includes(arg)) {
    throw new DotCommandError(`.mode takes one of ${MODES.join(", ")}; got ${arg}`);
  }
  return arg as QueryTextFormat;
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

/**
 * Reads statements and dot commands from standard input until `.quit` or its end. Prompts are
 * shown only on a terminal, so piped output holds results alone.
 *
 * @example
 * ```ts
 * import type { DuckDBConnection } from "@duckdb/node-api";
 * import { sqlPrompt, type SqlPromptOptions } from "./sql-prompt.ts";
 * declare const conn: DuckDBConnection;
 * declare const run: SqlPromptOptions["run"];
 *
 * // printf '.mode csv\nSELECT 1 AS x;\n' | deno task sql
 * await sqlPrompt(conn, { mode: "table", run });
 * ```
 */
export async function sqlPrompt(conn: DuckDBConnection, options: SqlPromptOptions): Promise<void> {
  const terminal = Deno.stdin.isTerminal();
  const show = (p: string) => terminal && Deno.stdout.writeSync(new TextEncoder().encode(p));
  if (terminal) console.log(`polyrl sql: statements end with ';'. .help lists the commands.`);
  let mode = options.mode;
  let buffer = "";
  show("polyrl> ");
  for await (const line of stdinLines()) {
    const trimmed = line.trim();
    if (!buffer && trimmed.startsWith(".")) {
      const [command, arg, ...extra] = trimmed.split(/\s+/);
      try {
        if (extra.length > 0) throw new DotCommandError(`${command} takes at most one argument`);
        if (command === ".quit") return;
        else if (command === ".help") console.log(helpText(mode));
        else if (command === ".tables") console.log(EXPORTED.join("\n"));
        else if (command === ".schema") console.log((await schema(conn, arg, mode)).trimEnd());
        // Setting the mode prints nothing, so piped output holds results alone.
        else if (command === ".mode" && arg === undefined) console.log(mode);
        else if (command === ".mode") mode = parseMode(arg);
        else throw new DotCommandError(`unknown command ${command}; .help lists the commands`);
      } catch (err) {
        console.error(`error: ${(err as Error).message}`);
      }
    } else if (buffer || trimmed) {
      buffer += (buffer ? "\n" : "") + line;
      if (trimmed.endsWith(";")) {
        const query = buffer;
        buffer = "";
        try {
          await options.run(query, mode);
        } catch (err) {
          console.error(`error: ${(err as Error).message}`);
        }
      }
    }
    show(buffer ? "   ...> " : "polyrl> ");
  }
}
