/**
 * The in-place progress line names its unit, and clearLine() erases it so that the next line
 * (eval's `run id:` of its next seed) does not start after the ETA.
 */
import assert from "node:assert/strict";

const reporter = new URL("../../engine/trainer/progress.ts", import.meta.url).href;

Deno.test("progress: the rate's unit, and a cleared line before a run id", async () => {
  const script = `import { progressReporter } from "${reporter}";
    const p = progressReporter("eval", true, "episodes");
    p.update(2, 2, "seed 0");
    p.clearLine();
    console.error("run id: e-seed1");
    p.finish();`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(out.stderr);
  assert.ok(out.success, err);
  assert.match(err, /eval 2\/2 \[seed 0\] [\d.]+ episodes\/s /);
  const erase = "\r" + String.fromCharCode(27) + "[2K"; // carriage return, then erase the line
  assert.ok(err.includes(`ETA 0s${erase}run id: e-seed1\n`), JSON.stringify(err));
});
