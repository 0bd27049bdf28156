/**
 * The statistics conformance rows are what scipy computes: runs scipy_reference.py, which
 * recomputes every Welch, paired, McNemar and pass@k row. Skipped, with the reason, where python3
 * has no scipy.
 */
import assert from "node:assert/strict";

const script = new URL("./scipy_reference.py", import.meta.url).pathname;

async function python(args: string[]): Promise<Deno.CommandOutput | null> {
  try {
    return await new Deno.Command("python3", { args, stdout: "piped", stderr: "piped" }).output();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

const probe = await python(["-c", "import scipy.stats"]);

Deno.test({
  name: "welch, paired, mcnemar and pass-at-k rows agree with scipy within 1e-12",
  ignore: !probe?.success,
  fn: async () => {
    const run = await python([script]);
    const out = new TextDecoder().decode(run!.stdout) + new TextDecoder().decode(run!.stderr);
    assert.ok(run!.success, out);
    assert.match(out, /welch\.jsonl \(relative\): largest difference/);
    assert.match(out, /mcnemar\.jsonl \(relative\): largest difference/);
  },
});
