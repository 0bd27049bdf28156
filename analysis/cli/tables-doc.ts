/**
 * `deno run -A analysis/cli/tables-doc.ts [FILE]`: prints FILE (default analysis/TABLES.md) with
 * its base-table section generated from the table declarations (analysis/projections/tables.ts).
 * `deno task docs` runs it to write or check the file: the engine, where that task lives, may not
 * import analysis (docs/ARCHITECTURE.md, "Layers").
 */
import { commandExitCode, defineCommand, ExitCode } from "../../events/cli/mod.ts";
import { tablesDoc } from "../projections/tables-doc.ts";

const DEFAULT_FILE = "analysis/TABLES.md";
const USAGE = `deno run -A analysis/cli/tables-doc.ts [FILE]`;

const cli = defineCommand({
  name: "tables-doc",
  usage: USAGE,
  summary: "Prints the analysis tables reference with its base tables' section (every table, " +
    "column, type and meaning) generated from analysis/projections/tables.ts; " +
    "deno task docs writes it.",
  options: {},
  allowPositionals: true,
  examples: ["deno run -A analysis/cli/tables-doc.ts", "deno task docs"],
});

/** `deno task tables-doc ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(USAGE, async () => {
    const { positionals } = cli.parse(args);
    const file = positionals[0] ?? DEFAULT_FILE;
    await Deno.stdout.write(
      new TextEncoder().encode(await tablesDoc(await Deno.readTextFile(file))),
    );
    return ExitCode.ok;
  });

if (import.meta.main) Deno.exit(await main(Deno.args));
