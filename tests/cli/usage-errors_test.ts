import assert from "node:assert/strict";
import { runCli } from "../support/run-cli.ts";
import { taskScripts } from "./task-scripts.ts";

Deno.test("every task answers a usage mistake with exit 2, the error and one usage line", async () => {
  const entries = taskScripts();
  assert.ok(entries.length >= 13, `found ${entries.length} task scripts`);
  for (const [name, script] of entries) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", script, "--no-such-option"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2, `${name}: exit ${out.code}\n${err}`);
    assert.match(err, /no-such-option/, `${name} names the bad option`);
    const usage = err.split("\n").filter((l) => l.startsWith("usage:"));
    assert.equal(usage.length, 1, `${name} prints one usage line:\n${err}`);
    assert.match(usage[0], new RegExp(`^usage: deno task ${name}\\b`), `${name}: ${usage[0]}`);
  }
});

Deno.test("a mistyped option names the closest option; one close to none says where the options are", async () => {
  const cases = [
    ["engine/cli/train.ts", ["--stpes", "3"], "unknown option --stpes; did you mean --steps?"],
    ["engine/cli/train.ts", ["--stpes=3"], "unknown option --stpes; did you mean --steps?"],
    [
      "analysis/cli/report.ts",
      ["--basline", "x"],
      "unknown option --basline; did you mean --baseline?",
    ],
    [
      "analysis/cli/sql.ts",
      ["SELECT 1", "--fromat", "csv"],
      "unknown option --fromat; did you mean --format?",
    ],
    [
      "analysis/cli/runs.ts",
      ["--stauts", "failed"],
      "unknown option --stauts; did you mean --status?",
    ],
    [
      "analysis/cli/runs.ts",
      ["--frobnicate"],
      "unknown option --frobnicate; --help lists the options",
    ],
    ["analysis/cli/runs.ts", ["-x"], "unknown option -x; --help lists the options"],
  ] as const;
  for (const [script, args, message] of cases) {
    const r = await runCli(script, ...args);
    assert.equal(r.code, 2, `${script} ${args.join(" ")}: exit ${r.code}\n${r.stderr}`);
    assert.equal(r.stderr.split("\n")[0], `error: ${message}`, `${script} ${args.join(" ")}`);
    assert.equal(r.stdout, "");
  }
});
