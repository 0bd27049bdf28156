/**
 * Every task answers `--help` with exit 0 and a help text that names the value each option takes
 * (`--steps N`, never a bare VALUE) and shows at least one example command line of that task. The
 * tasks run in this process (one module load each, shared modules once); tests/cli/usage-errors
 * runs every task as a process.
 */
import assert from "node:assert/strict";
import { runInProcess } from "../support/run-cli.ts";
import { presetNames } from "../../engine/config/mod.ts";
import { taskScripts } from "./task-scripts.ts";

/** The `--help` text split into its `options:` and `examples:` sections. */
function sections(help: string) {
  const lines = help.split("\n");
  const from = (title: string) => lines.indexOf(title);
  const options = lines.slice(from("options:") + 1, from("examples:")).filter((l) => l.trim());
  const examples = lines.slice(from("examples:") + 1).filter((l) => l.trim());
  return { options, examples, found: from("options:") >= 0 && from("examples:") >= 0 };
}

Deno.test("every task's --help names option values and shows an example of the task", async () => {
  const entries = taskScripts();
  assert.ok(entries.length >= 13, `found ${entries.length} task scripts`);
  for (const [name, script] of entries) {
    const out = await runInProcess(script, "--help");
    assert.equal(out.code, 0, `${name} --help: exit ${out.code}\n${out.stderr}`);
    assert.ok(out.stdout.trim().length > 0, `${name} --help printed nothing`);
    const { options, examples, found } = sections(out.stdout);
    assert.ok(found, `${name} --help has options: and examples: sections:\n${out.stdout}`);
    assert.ok(options.some((l) => /^ {2}--help\b/.test(l)), `${name} lists --help`);
    // A string option without a value name renders as the generic VALUE placeholder.
    const unnamed = options.filter((l) => /^ {2}--\S+ VALUE\s/.test(l));
    assert.deepEqual(unnamed, [], `${name}: options without a value name`);
    assert.ok(examples.length >= 1, `${name} shows an example`);
    for (const example of examples) {
      assert.match(example, new RegExp(`^ {2}deno task ${name}\\b`), `${name}: ${example}`);
    }
  }
});

Deno.test("--help shows the value names a user types", async () => {
  const train = (await runInProcess("engine/cli/train.ts", "--help")).stdout;
  assert.match(train, /^ {2}--steps N +override the config's number of steps/m);
  assert.match(train, /^ {2}--store PATH\|URL +event store/m);
  assert.match(train, /^ {2}--format table\|json\|csv +output format/m);
  assert.match(train, /^ {2}--resume RUN\|latest +continue/m);
  const presets = train.slice(train.indexOf("presets (--preset NAME):"), train.indexOf("options:"));
  for (const name of presetNames()) {
    assert.match(presets, new RegExp(`^ {2}${name} +\\S`, "m"), `preset ${name} has a summary`);
  }
  assert.match(presets, /^ {2}smoke +checks the pipeline.*charts stay flat$/m);
  const grade = (await runInProcess("engine/cli/grade.ts", "--help")).stdout;
  assert.match(grade, /^ {2}--format table\|json\|csv /m);
  assert.match(grade, /^ {2}--strict +variables must match/m, "a boolean flag takes no value");
});
