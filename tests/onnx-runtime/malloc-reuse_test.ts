/**
 * Supervised training keeps freed tensor memory in the process (glibc-malloc.ts): a block the
 * size of a train step's planned intermediates, freed and taken again, reuses the pages it
 * touched instead of faulting them in anew; the cpu backend alone (RL runs) keeps glibc's
 * defaults. Measured in a child process, since the thresholds are process-wide, and on malloc
 * itself: in a train step the garbage collector's timing of other frees moves the figure from
 * step to step (`deno task bench models` reports it per train step).
 */
import assert from "node:assert/strict";

const linux = Deno.build.os === "linux";

Deno.test({
  name: "a supervised trainer keeps freed memory for reuse; the cpu backend alone does not",
  ignore: !linux,
  fn: async () => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL("./malloc-reuse-child.ts", import.meta.url).pathname],
      stderr: "inherit",
    }).output();
    assert.equal(out.code, 0);
    const { runtime, trainer } = JSON.parse(new TextDecoder().decode(out.stdout));
    // 110 MB is some 28,000 pages of 4 KiB, each faulted in when mapped anew.
    assert.ok(runtime > 25_000, `the cpu backend alone maps the block anew: ${runtime} faults`);
    assert.ok(trainer < 100, `after a supervised trainer opens: ${trainer} faults per cycle`);
  },
});
