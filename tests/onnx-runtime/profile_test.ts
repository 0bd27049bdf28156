/**
 * onnxruntime's profiler through the runtime (`profile: true`, `Runtime.endProfiling`): every
 * session's events come back by the name it was loaded under, released sessions included, and
 * `runProfile` splits an average run into host time per node and, on WebGPU with
 * timestamp-query, GPU time per program.
 */
import assert from "node:assert/strict";
import { Graph, mul, sub, toOnnxModel } from "../../adapters/onnx/mod.ts";
import {
  hostTensor,
  openRuntime,
  probeWebGpuAdapter,
  runProfile,
  RuntimeError,
} from "../../adapters/onnx/runtime/mod.ts";
import { testName, webgpuSkipReason } from "../onnx-train/backends.ts";

/** y = x * w - x: two nodes that onnxruntime does not fuse. */
function scaled(): Uint8Array {
  const g = new Graph("scaled");
  const x = g.input("x", "float32", [2, 2]);
  g.output(sub(mul(x, g.input("w", "float32", [2, 2])), x), "y");
  return toOnnxModel(g);
}
const feeds = {
  x: hostTensor("float32", [2, 2], [1, 2, 3, 4]),
  w: hostTensor("float32", [2, 2], [0.5, 0, 0, 2]),
};
const probe = await probeWebGpuAdapter();
const timestamps = probe.kind === "adapter" && probe.adapter.features.has("timestamp-query");

for (const [backend, skip] of [["wasm", null], ["webgpu-web", webgpuSkipReason]] as const) {
  Deno.test({
    name: testName(`${backend}: profiles come back per session, released ones included`, skip),
    ignore: skip !== null,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      const runtime = await openRuntime(backend, { profile: true });
      try {
        const first = await runtime.load(scaled(), { name: "first" });
        const second = await runtime.load(scaled(), { name: "second" });
        for (let i = 0; i < 3; i++) {
          assert.deepEqual([...(await first.run(feeds)).host.y.data], [-0.5, -2, -3, 4]);
        }
        await second.run(feeds);
        await first.release(); // its profile is taken before onnxruntime forgets it
        const profiles = runtime.endProfiling();
        assert.deepEqual(profiles.map((p) => p.session).sort(), ["first", "second"]);
        const run = runProfile(profiles.find((p) => p.session === "first")!);
        assert.equal(run.runs, 3);
        assert.equal(run.nodes, 2, "Mul and Sub, once per run");
        assert.deepEqual(run.copies, { toHost: 0, fromHost: 0 });
        const host = run.ops.filter((o) => o.clock === "host").map((o) => o.op).sort();
        assert.deepEqual(host, ["Mul", "Sub"]);
        assert.ok(run.runMicroseconds > 0);
        if (backend === "webgpu-web" && timestamps) {
          assert.ok(run.gpuPrograms >= 2, `${run.gpuPrograms} GPU programs per run`);
          assert.ok(run.gpuMicroseconds > 0);
        } else {
          assert.equal(run.gpuPrograms, 0);
        }
        // Ended: nothing more is kept, and later sessions are not profiled.
        const later = await runtime.load(scaled(), { name: "later" });
        await later.run(feeds);
        assert.deepEqual(runtime.endProfiling(), []);
        await later.release();
        await second.release();
      } finally {
        await runtime.close();
      }
    },
  });
}

Deno.test("profiling asks for a web backend, and endProfiling for a profiled runtime", async () => {
  await assert.rejects(
    () => openRuntime("cpu", { profile: true }),
    (e: unknown) => e instanceof RuntimeError && /needs a backend other than cpu/.test(e.message),
  );
  const runtime = await openRuntime("wasm");
  try {
    assert.throws(() => runtime.endProfiling(), /not opened with profile: true/);
  } finally {
    await runtime.close();
  }
});
