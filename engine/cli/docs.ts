/**
 * `deno task docs [--check] [--out FILE] [--readme FILE] [--tables FILE]`: writes the generated
 * documentation: docs/CONFIG.md, the config reference from the zod schema
 * (engine/config/config-reference.ts), the README's estimator table from the estimator registry
 * (engine/advantages/estimator-table.ts), between its markers, and analysis/TABLES.md's base
 * tables from their declarations (analysis/projections/tables.ts), between its markers.
 * `--check` writes nothing and exits 1 when one differs from what its source gives, naming the fix.
 */
import { fileURLToPath } from "node:url";
import { commandExitCode, defineCommand, ExitCode } from "../../events/cli/mod.ts";
import { withEstimatorTable } from "../advantages/mod.ts";
import { configReference } from "../config/mod.ts";

const DEFAULT_OUT = "docs/CONFIG.md";
const DEFAULT_README = "README.md";
const DEFAULT_TABLES = "analysis/TABLES.md";
const USAGE = `deno task docs [--check] [--out FILE] [--readme FILE] [--tables FILE]`;

const cli = defineCommand({
  name: "docs",
  usage: USAGE,
  summary: "Writes the experiment config reference (every key, type, default and meaning) " +
    "generated from engine/config/schema.ts, the README's estimator table generated from " +
    "engine/advantages/registry.ts and analysis/TABLES.md's base tables generated from " +
    "analysis/projections/tables.ts.",
  options: {
    out: {
      type: "string",
      default: DEFAULT_OUT,
      value: "FILE",
      path: true,
      output: true,
      help: `config reference to write (default ${DEFAULT_OUT})`,
    },
    readme: {
      type: "string",
      default: DEFAULT_README,
      value: "FILE",
      path: true,
      output: true,
      help: `file whose estimator table to write, between its markers (default ${DEFAULT_README})`,
    },
    tables: {
      type: "string",
      default: DEFAULT_TABLES,
      value: "FILE",
      path: true,
      output: true,
      help: `file whose base tables to write, between its markers (default ${DEFAULT_TABLES})`,
    },
    check: {
      type: "boolean",
      default: false,
      help: "write nothing; exit 1 when a file is not what its source gives",
    },
  },
  allowPositionals: false,
  examples: ["deno task docs", "deno task docs --check"],
});

/** One generated document: where it goes, what it should hold, and what it is generated from. */
interface Generated {
  readonly path: string;
  readonly text: string;
  readonly from: string;
}

/** A generator that runs as its own process failed; its stderr says why. */
class GeneratorError extends Error {
  override name = "GeneratorError";
  constructor(readonly script: string, readonly stderr: string) {
    super(`${script} failed: ${stderr}`);
  }
}

/**
 * `file` with its base tables generated, as analysis/cli/tables-doc.ts prints it: in a process of
 * its own, as the engine may not import analysis (docs/ARCHITECTURE.md, "Layers").
 */
async function withBaseTables(file: string): Promise<string> {
  const cli = fileURLToPath(new URL("../../analysis/cli/tables-doc.ts", import.meta.url));
  const out = await new Deno.Command(Deno.execPath(), { args: ["run", "-A", cli, file] }).output();
  if (!out.success) throw new GeneratorError(cli, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

async function readIfPresent(path: string): Promise<string | undefined> {
  return await Deno.readTextFile(path).catch((err) => {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  });
}

/** `deno task docs ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(USAGE, async () => {
    const { values } = cli.parse(args);
    const readme = await Deno.readTextFile(values.readme);
    const documents: Generated[] = [
      { path: values.out, text: configReference(), from: "engine/config/schema.ts" },
      {
        path: values.readme,
        text: withEstimatorTable(readme, values.readme),
        from: "engine/advantages/registry.ts",
      },
      {
        path: values.tables,
        text: await withBaseTables(values.tables),
        from: "analysis/projections/tables.ts",
      },
    ];
    let stale = 0;
    for (const { path, text, from } of documents) {
      const current = path === values.readme ? readme : await readIfPresent(path);
      if (current === text) {
        console.log(`${path} matches ${from}`);
      } else if (!values.check) {
        await Deno.writeTextFile(path, text);
        console.log(`wrote ${path}`);
      } else {
        stale++;
        console.error(
          `${path} ${current === undefined ? "is missing" : "is out of date"}: ` +
            `run deno task docs (it is generated from ${from})`,
        );
      }
    }
    return stale === 0 ? ExitCode.ok : ExitCode.failedCheck;
  });

if (import.meta.main) Deno.exit(await main(Deno.args));
