import assert from "node:assert/strict";
import {
  hostTensor,
  HostTensorError,
  openRuntime,
  probeWebGpuAdapter,
} from "../../adapters/onnx/runtime/mod.ts";

Deno.test("hostTensor rejects data that does not fill its dims, naming both", () => {
  assert.throws(
    () => hostTensor("float32", [2, 3], new Float32Array(5)),
    (e: unknown) => e instanceof HostTensorError && /5 elements.*\[2,3\].*6/.test(e.message),
  );
  const wrong = new Float32Array(2) as unknown as Int32Array;
  assert.throws(() => hostTensor("int32", [2], wrong), HostTensorError);
  assert.deepEqual([...hostTensor("int32", [3], [1, 2, 3]).data], [1, 2, 3]);
});

Deno.test("auto picks a WebGPU backend only for a hardware adapter and records why", async () => {
  const probe = await probeWebGpuAdapter();
  const runtime = await openRuntime("auto", { threads: 1 });
  try {
    assert.equal(runtime.info.requested, "auto");
    const hardware = probe.kind === "adapter" && !probe.info.isFallbackAdapter;
    // On a hardware adapter: the native EP where it opens, onnxruntime-web where it does not.
    assert.equal(runtime.info.executionProvider, hardware ? "webgpu" : "cpu");
    assert.match(runtime.info.autoReason ?? "", hardware ? /hardware adapter/ : /cpu, since/);
    assert.equal(runtime.info.onnxruntime.version, "1.30.0");
  } finally {
    await runtime.close();
  }
});

Deno.test("cpu runtime info names package, EP and thread count", async () => {
  const runtime = await openRuntime("cpu", { threads: 2 });
  try {
    assert.deepEqual(
      { ...runtime.info, deno: "" },
      {
        backend: "cpu",
        requested: "cpu",
        autoReason: null,
        onnxruntime: { package: "onnxruntime-node", version: "1.30.0" },
        executionProvider: "cpu",
        threads: 2,
        deterministicCompute: true,
        adapter: null,
        deno: "",
      },
    );
  } finally {
    await runtime.close();
  }
});
