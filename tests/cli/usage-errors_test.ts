import assert from "node:assert/strict";
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
