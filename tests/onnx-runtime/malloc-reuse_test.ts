/**
 * cpu processes keep the tensor memory they free for reuse (glibc-malloc.ts): blocks freed and
 * taken again reuse the pages they touched instead of faulting them in anew. The cpu backend keeps
 * blocks up to 32 MiB, where glibc's defaults give back a run's many freed tensors each time; a
 * supervised trainer's session, run at one shape, keeps its step's one 110 MB plan in
 * onnxruntime's arena. Measured in a child process, since the thresholds are process-wide, under
 * glibc's default tunables (deno.json's tasks map memory in huge pages, which fault less often):
 * on malloc itself, and per train step, where what the garbage collector frees when moves the
 * heap's own growth (a few thousand pages at some steps) but not the plan's.
 */
import assert from "node:assert/strict";

const linux = Deno.build.os === "linux";

Deno.test({
  name:
    "the cpu backend keeps a run's freed tensors for reuse; a supervised trainer its step's plan",
  ignore: !linux,
  fn: async () => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL("./malloc-reuse-child.ts", import.meta.url).pathname],
      env: { GLIBC_TUNABLES: "" },
      stderr: "inherit",
    }).output();
    assert.equal(out.code, 0);
    const faults = JSON.parse(new TextDecoder().decode(out.stdout));
    const said = JSON.stringify(faults);
    // 72 MiB is some 18,000 pages of 4 KiB, and 110 MB some 28,000, each faulted in when mapped anew.
    assert.ok(faults.defaults.run > 15_000, `glibc's defaults give the run's back: ${said}`);
    assert.ok(faults.defaults.plan > 25_000, `and map the plan anew: ${said}`);
    assert.ok(faults.runtime.run < 100, `the cpu backend keeps the run's: ${said}`);
    assert.ok(faults.runtime.plan > 25_000, `but maps a block past 32 MiB anew: ${said}`);
    // The plan mapped anew is some 28,000 pages a step; the first two steps fill the arena.
    const later: number[] = faults.trainerSteps.slice(2);
    assert.ok(later.every((n) => n < 10_000), `a trainer keeps its plan: ${said}`);
  },
});
