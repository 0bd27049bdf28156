/**
 * What a WebGPU run moves between the host and the GPU. Deno's GPUBuffer.mapAsync waits at least
 * 10 ms per call (it sleeps between device polls), so the runtime reads all of a run's host
 * outputs with one map, and the train step learns its applied-step count from its outputs
 * rather than by reading the state back. Counted here by wrapping GPUBuffer.mapAsync: the
 * values must match the cpu backend exactly, and a run costs one map whatever its output count.
 */
import assert from "node:assert/strict";
import { castTo, Graph, mul, reduceSum, toOnnxModel } from "../../adapters/onnx/mod.ts";
import { openTrainStep } from "../../adapters/onnx/train-step/runner.ts";
import { IO } from "../../adapters/onnx/train-step/spec.ts";
import { hostTensor, type Runtime } from "../../adapters/onnx/runtime/mod.ts";
import { testName, webgpuSkipReason, withRuntime } from "../onnx-train/backends.ts";
import { tinyBatch, tinyParams, tinyPolicy, tinyWeights } from "../onnx-train/tiny-policy.ts";

/** Counts GPUBuffer.mapAsync calls while `body` runs. */
async function countMaps(body: () => Promise<void>): Promise<number> {
  const proto = (globalThis as unknown as { GPUBuffer: { prototype: GPUBuffer } }).GPUBuffer
    .prototype;
  const mapAsync = proto.mapAsync;
  let maps = 0;
  proto.mapAsync = function (this: GPUBuffer, ...args: Parameters<GPUBuffer["mapAsync"]>) {
    maps++;
    return mapAsync.apply(this, args);
  };
  try {
    await body();
  } finally {
    proto.mapAsync = mapAsync;
  }
  return maps;
}

/** Five host outputs of four element types (one of them empty) and one kept on the device. */
function manyOutputs(): Uint8Array {
  const g = new Graph("many-outputs");
  const x = g.input("x", "float32", [2, 3]);
  const none = g.input("none", "float32", [0, 3]);
  g.output(mul(x, 2), "doubled");
  g.output(reduceSum(x), "sum");
  g.output(castTo(x, "int32"), "ints");
  g.output(castTo(x, "float16"), "halves");
  g.output(mul(none, 2), "empty");
  g.output(mul(x, 3), "kept");
  return toOnnxModel(g);
}
const feeds = {
  x: hostTensor("float32", [2, 3], [1.5, -2, 3.25, 4, 0.125, -6]),
  none: hostTensor("float32", [0, 3], []),
};

async function runOnce(runtime: Runtime) {
  const session = await runtime.load(manyOutputs(), { keepOnDevice: ["kept"] });
  await session.run(feeds); // compiles the kernels
  let result!: Awaited<ReturnType<typeof session.run>>;
  const maps = await countMaps(async () => {
    result = await session.run(feeds);
  });
  const host = Object.fromEntries(
    Object.entries(result.host).map((
      [k, v],
    ) => [k, { dtype: v.dtype, dims: v.dims, data: [...v.data] }]),
  );
  const kept = await result.device.kept.read();
  result.device.kept.dispose();
  await session.release();
  return { maps, host, kept: [...kept.data] };
}

Deno.test({
  name: testName(
    "webgpu-web: a run's host outputs come back in one read, equal to cpu's",
    webgpuSkipReason,
  ),
  ignore: webgpuSkipReason !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const gpu = await withRuntime("webgpu-web", runOnce);
    const cpu = await withRuntime("cpu", runOnce);
    assert.equal(gpu.maps, 1, "four non-empty host outputs, one map");
    assert.deepEqual(gpu.host, cpu.host);
    assert.deepEqual(Object.keys(gpu.host).sort(), ["doubled", "empty", "halves", "ints", "sum"]);
    assert.deepEqual(gpu.host.empty.dims, [0, 3]);
    assert.deepEqual(gpu.kept, cpu.kept);
  },
});

Deno.test({
  name: testName(
    "webgpu-web: a train step reads its metrics and step count in one map besides the finite check",
    webgpuSkipReason,
  ),
  ignore: webgpuSkipReason !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const sizes = { vocab: 16, dim: 8, hidden: 16, rank: 0 };
    const hyper = {
      lr: 0.01,
      clipLow: 0.2,
      clipHigh: 0.28,
      klCoef: 0.1,
      weightDecay: 0.01,
      maxGradNorm: 1,
      temperature: 1,
    };
    await withRuntime("webgpu-web", async (runtime) => {
      const runner = await openTrainStep({
        runtime,
        config: { policy: tinyPolicy(sizes), params: tinyParams(sizes), kl: "k3" },
        initial: tinyWeights(sizes, 3),
      });
      const batch = tinyBatch(sizes, 4, 8, 1);
      await runner.step(batch, hyper);
      let applied = 0;
      const maps = await countMaps(async () => {
        applied = (await runner.step(batch, hyper)).appliedSteps;
      });
      assert.equal(applied, 2);
      assert.equal((await runner.state.read(IO.adamStep)).data[0], 2, "the state agrees");
      // One read of the outputs, plus the copy onnxruntime makes of the gradient norm for the
      // finite check (IsNaN and IsInf run on its CPU EP). The code before counted 11 here: a map
      // per host output, a copy of each of the PPO clip's computed bounds and a step-count read.
      assert.equal(maps, 2);
      await runner.release();
    });
  },
});
