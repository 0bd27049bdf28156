/**
 * The same train steps on cpu, wasm and webgpu. Across backends the kernels sum in different
 * orders, so results agree only within a tolerance: |a - b| <= 1e-5 + 1e-3 |b| for parameters
 * after three AdamW steps and for every reported metric (float32 round-off through the forward,
 * backward and m / sqrt(v) update). On one backend two runs must be bit-identical.
 */
import assert from "node:assert/strict";
import { openTrainStep, type TrainStepHyper } from "../../adapters/onnx/train-step/runner.ts";
import { IO, type TrainStepConfig } from "../../adapters/onnx/train-step/spec.ts";
import type { BackendName } from "../../adapters/onnx/runtime/mod.ts";
import { backends, testName, webgpuSkipReason, withRuntime } from "../onnx-train/backends.ts";
import { tinyBatch, tinyParams, tinyPolicy, tinyWeights } from "../onnx-train/tiny-policy.ts";

const sizes = { vocab: 16, dim: 8, hidden: 16, rank: 0 };
const config: TrainStepConfig = {
  policy: tinyPolicy(sizes),
  params: tinyParams(sizes),
  aggregation: "seq-mean-token-mean",
  kl: "k3",
};
const hyper: TrainStepHyper = {
  lr: 0.01,
  clipLow: 0.2,
  clipHigh: 0.28,
  klCoef: 0.1,
  weightDecay: 0.01,
  maxGradNorm: 1,
  temperature: 0.9,
};
const weights = tinyWeights(sizes, 7);
const batches = [1, 2, 3].map((seed) => tinyBatch(sizes, 6, 10, seed));
const REL = 1e-3;
const ABS = 1e-5;

interface Trace {
  readonly metrics: number[];
  readonly params: Float32Array[];
  readonly locations: string[];
}

async function trainTrace(backend: BackendName): Promise<Trace> {
  return await withRuntime(backend, async (runtime) => {
    const runner = await openTrainStep({ runtime, config, initial: weights });
    const metrics: number[] = [];
    for (const batch of batches) {
      const m = await runner.step(batch, hyper);
      assert.equal(m.skipped, false);
      metrics.push(
        m.loss,
        m.policyLoss,
        m.klLoss,
        m.clipFraction,
        m.approxKl,
        m.entropy,
        m.gradNorm,
      );
    }
    const locations = runner.trainable.map((n) => runner.state.get(IO.param(n)).location);
    const params = [];
    for (const name of runner.trainable) {
      params.push((await runner.readParam(name)).data as Float32Array);
    }
    await runner.release();
    return { metrics, params, locations };
  });
}

// The first trace of each backend serves both its determinism and its parity test.
const first = new Map<BackendName, Promise<Trace>>();
const firstTrace = (backend: BackendName) => {
  if (!first.has(backend)) first.set(backend, trainTrace(backend));
  return first.get(backend)!;
};

for (const { name, skip } of backends) {
  Deno.test({
    name: testName(`${name}: two runs of the same train steps are bit-identical`, skip),
    ignore: skip !== null,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const a = await firstTrace(name);
      const b = await trainTrace(name);
      assert.deepEqual(b.metrics, a.metrics);
      a.params.forEach((p, i) => assert.deepEqual(b.params[i], p, `param ${i}`));
      assert.deepEqual(
        a.locations,
        a.params.map(() => name === "webgpu-web" ? "gpu-buffer" : "cpu"),
      );
    },
  });
  if (name === "cpu") continue;
  Deno.test({
    name: testName(`${name} agrees with cpu within |d| <= ${ABS} + ${REL}|cpu|`, skip),
    ignore: skip !== null,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const ref = await firstTrace("cpu");
      const other = await firstTrace(name);
      let worst = 0;
      const check = (a: number, b: number, what: string) => {
        const d = Math.abs(a - b);
        worst = Math.max(worst, d / (ABS + REL * Math.abs(b)));
        assert.ok(d <= ABS + REL * Math.abs(b), `${what}: ${name} ${a} vs cpu ${b}`);
      };
      other.metrics.forEach((m, i) => check(m, ref.metrics[i], `metric ${i}`));
      other.params.forEach((p, i) =>
        p.forEach((x, j) => check(x, ref.params[i][j], `param ${i}[${j}]`))
      );
      console.log(
        `${name} vs cpu: worst difference is ${(worst * 100).toFixed(2)}% of the tolerance`,
      );
    },
  });
}

Deno.test({
  name: "webgpu-web parity tests run whenever Deno has an adapter",
  fn: () => {
    // Documents the skip rule: webgpu-web tests are ignored only without any adapter.
    assert.equal(backends.find((b) => b.name === "webgpu-web")?.skip ?? null, webgpuSkipReason);
  },
});
