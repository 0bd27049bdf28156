/**
 * `deno task docs [--check] [--out FILE]`: writes docs/CONFIG.md, the config reference generated
 * from the zod schema (engine/config/config-reference.ts). `--check` writes nothing and exits 1
 * when the file differs from what the schema gives, naming the fix.
 */
import { defineCommand, ExitCode, runCommand } from "../../events/cli/mod.ts";
import { configReference } from "../config/config-reference.ts";

const DEFAULT_OUT = "docs/CONFIG.md";
const USAGE = `deno task docs [--check] [--out FILE]`;

const cli = defineCommand({
  name: "docs",
  usage: USAGE,
  summary: "Writes the experiment config reference (every key, type, default and meaning) " +
    "generated from engine/config/schema.ts.",
  options: {
    out: {
      type: "string",
      default: DEFAULT_OUT,
      value: "FILE",
      path: true,
      output: true,
      help: `file to write (default ${DEFAULT_OUT})`,
    },
    check: {
      type: "boolean",
      default: false,
      help: "write nothing; exit 1 when the file is not what the schema gives",
    },
  },
  allowPositionals: false,
  examples: ["deno task docs", "deno task docs --check"],
});

await runCommand(USAGE, async () => {
  const { values } = cli.parse(Deno.args);
  const text = configReference();
  if (!values.check) {
    await Deno.writeTextFile(values.out, text);
    console.log(`wrote ${values.out}`);
    return ExitCode.ok;
  }
  const current = await Deno.readTextFile(values.out).catch((err) => {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  });
  if (current === text) {
    console.log(`${values.out} matches engine/config/schema.ts`);
    return ExitCode.ok;
  }
  console.error(
    `${values.out} ${current === undefined ? "is missing" : "is out of date"}: ` +
      "run deno task docs (it is generated from engine/config/schema.ts)",
  );
  return ExitCode.failedCheck;
});
