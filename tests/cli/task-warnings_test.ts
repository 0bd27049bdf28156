/**
 * A task prints only its own output: no package-manager warning from Deno's node_modules setup.
 * apache-arrow 17 (a dependency of duckdb-wasm) declares an `arrow2csv` bin its package lacks;
 * with `"nodeModulesDir": "auto"` Deno set that bin up again, and warned, on every run (twice
 * per task). deno.json's `"manual"` leaves node_modules to `deno install`.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../..", import.meta.url).pathname;

Deno.test("deno task runs without package-manager warnings", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}/deno.json`));
  assert.equal(config.nodeModulesDir, "manual", "tasks must not re-link node_modules");
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "stats", "welch", "--a", "41.9,0.3,10", "--b", "39.9,0.4,10"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.match(new TextDecoder().decode(out.stdout), /^diff {2}2$/m);
  // What deno task itself prints: the `Task NAME COMMAND` line, nothing else.
  const lines = stderr.split("\n").filter((l) => l.trim() !== "");
  assert.deepEqual(lines.filter((l) => !l.startsWith("Task stats ")), [], stderr);
});
