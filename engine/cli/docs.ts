/**
 * `deno task docs [--check] [--out FILE] [--readme FILE]`: writes the generated documentation:
 * docs/CONFIG.md, the config reference from the zod schema (engine/config/config-reference.ts),
 * and the README's estimator table from the estimator registry (engine/advantages/
 * estimator-table.ts), between its markers. `--check` writes nothing and exits 1 when either
 * differs from what its source gives, naming the fix.
 */
import { defineCommand, ExitCode, runCommand } from "../../events/cli/mod.ts";
import { withEstimatorTable } from "../advantages/estimator-table.ts";
import { configReference } from "../config/config-reference.ts";

const DEFAULT_OUT = "docs/CONFIG.md";
const DEFAULT_README = "README.md";
const USAGE = `deno task docs [--check] [--out FILE] [--readme FILE]`;

const cli = defineCommand({
  name: "docs",
  usage: USAGE,
  summary: "Writes the experiment config reference (every key, type, default and meaning) " +
    "generated from engine/config/schema.ts, and the README's estimator table generated from " +
    "engine/advantages/registry.ts.",
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

async function readIfPresent(path: string): Promise<string | undefined> {
  return await Deno.readTextFile(path).catch((err) => {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  });
}

await runCommand(USAGE, async () => {
  const { values } = cli.parse(Deno.args);
  const readme = await Deno.readTextFile(values.readme);
  const documents: Generated[] = [
    { path: values.out, text: configReference(), from: "engine/config/schema.ts" },
    {
      path: values.readme,
      text: withEstimatorTable(readme, values.readme),
      from: "engine/advantages/registry.ts",
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
