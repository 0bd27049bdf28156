/**
 * `deno task bench onnx`: how close a full train step (forward + backward + AdamW of a decoder
 * block stack) comes to a bare MatMul on the same backend. Both FLOP rates count matmul FLOPs
 * only (2 per multiply-add; backward = 2x forward), measured in one run; each rate takes the
 * fastest repetition, so that other processes on a shared machine disturb the ratio less.
 * The ratio target is >= 0.5 on cpu; wasm and webgpu-web (software adapter here) are reported too.
 */
import { Graph, matMul, toOnnxModel } from "../../adapters/onnx/mod.ts";
import {
  type BackendName,
  hostTensor,
  openRuntime,
  probeWebGpuAdapter,
  type Runtime,
} from "../../adapters/onnx/runtime/mod.ts";
import { openTrainStep } from "../../adapters/onnx/train-step/runner.ts";
import { stream, tinyBatch } from "../onnx-train/tiny-policy.ts";
import type { BenchOptions } from "./bench.ts";
import {
  decoderForwardFlops,
  decoderParams,
  decoderPolicy,
  type DecoderSizes,
} from "./onnx-bench-model.ts";

const sizes: DecoderSizes = { vocab: 512, dim: 256, heads: 4, layers: 2 };

/** Per backend: batch x seq of the step, timed matmul runs, timed steps (after one warm-up). */
interface Plan {
  readonly batch: number;
  readonly seq: number;
  readonly matmulRuns: number;
  readonly steps: number;
}

// The software WebGPU adapter (lavapipe) runs at ~0.1 GFLOP/s and single-threaded WASM at a few,
// so they train on fewer positions to keep the whole suite near a minute on 2 cores.
const gpuPlan: Plan = { batch: 1, seq: 32, matmulRuns: 3, steps: 1 };
const plans: Record<BackendName, Plan> = {
  cpu: { batch: 8, seq: 128, matmulRuns: 10, steps: 3 },
  wasm: { batch: 2, seq: 64, matmulRuns: 4, steps: 2 },
  webgpu: gpuPlan,
  "webgpu-web": gpuPlan,
};

let peakRss = 0;
function sampleRss(): void {
  peakRss = Math.max(peakRss, Deno.memoryUsage().rss);
}

function random(shape: readonly number[], seed: number, scale: number) {
  const next = stream(seed);
  const n = shape.reduce((a, b) => a * b, 1);
  return hostTensor(
    "float32",
    shape,
    Float32Array.from({ length: n }, () => (next() * 2 - 1) * scale),
  );
}

/** Fastest of `runs` timed calls after one warm-up: the least disturbed by other processes. */
async function timed(runs: number, body: () => Promise<void>): Promise<number> {
  await body();
  sampleRss();
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await body();
    best = Math.min(best, performance.now() - start);
    sampleRss();
  }
  return best / 1000;
}

/** FLOP/s of [B*T, D] x [D, 4D], the shape of the MLP up-projection. */
async function matmulRate(runtime: Runtime, plan: Plan): Promise<number> {
  const [m, k, n] = [plan.batch * plan.seq, sizes.dim, 4 * sizes.dim];
  const g = new Graph("bare-matmul");
  g.output(matMul(g.input("a", "float32", [m, k]), g.input("b", "float32", [k, n])), "c");
  const session = await runtime.load(toOnnxModel(g), { keepOnDevice: ["c"] });
  const a = runtime.upload(random([m, k], 1, 1));
  const b = runtime.upload(random([k, n], 2, 1));
  const seconds = await timed(plan.matmulRuns, async () => {
    const c = (await session.run({ a, b })).device.c;
    await c.read(); // waits for the device to finish
    c.dispose();
  });
  a.dispose();
  b.dispose();
  await session.release();
  return (2 * m * k * n) / seconds;
}

/** Train-step FLOP/s and seconds per step. */
async function trainRate(runtime: Runtime, plan: Plan): Promise<[number, number]> {
  const specs = decoderParams(sizes);
  const initial = Object.fromEntries(
    specs.map((p, i) => [
      p.name,
      p.name.includes("norm")
        ? hostTensor("float32", p.shape, new Float32Array(p.shape[0]).fill(1))
        : random(p.shape, 10 + i, 1 / Math.sqrt(p.shape[0])),
    ]),
  );
  const runner = await openTrainStep({
    runtime,
    config: { policy: decoderPolicy(sizes), params: specs, kl: "k3" },
    initial,
  });
  const batch = tinyBatch(
    { vocab: sizes.vocab, dim: 0, hidden: 0, rank: 0 },
    plan.batch,
    plan.seq,
    5,
  );
  const hyper = {
    lr: 1e-4,
    clipLow: 0.2,
    clipHigh: 0.28,
    klCoef: 0.01,
    weightDecay: 0.01,
    maxGradNorm: 1,
    temperature: 1,
  };
  const seconds = await timed(plan.steps, async () => {
    const m = await runner.step(batch, hyper);
    if (m.skipped) throw new Error("benchmark step was skipped: non-finite gradient");
  });
  await runner.release();
  return [(3 * decoderForwardFlops(sizes, plan.batch, plan.seq)) / seconds, seconds];
}

const giga = (x: number) => `${(x / 1e9).toFixed(2)} GFLOP/s`;

/**
 * Runs the benchmark on every backend that exists here (or on `--backend` alone) and prints one
 * line each.
 */
export async function run(options?: BenchOptions): Promise<void> {
  console.log(
    `decoder: ${sizes.layers} layers, dim ${sizes.dim}, ${sizes.heads} heads, vocab ` +
      `${sizes.vocab}; AdamW on all ${decoderParams(sizes).length} tensors; FLOPs count matmuls`,
  );
  const probe = await probeWebGpuAdapter();
  // The native webgpu backend runs when asked for: its process may need a software Vulkan set at
  // launch (the webgpu suite measures it against webgpu-web).
  const backends = options?.backend ? [options.backend] : (["cpu", "wasm", "webgpu-web"] as const);
  for (const backend of backends) {
    if (backend === "webgpu-web" && probe.kind === "no-adapter") {
      console.log(`webgpu-web: not run: ${probe.reason}`);
      continue;
    }
    const runtime = await openRuntime(backend);
    try {
      const plan = plans[backend];
      const mat = await matmulRate(runtime, plan);
      const [train, seconds] = await trainRate(runtime, plan);
      const flops = 3 * decoderForwardFlops(sizes, plan.batch, plan.seq);
      const adapter = runtime.info.adapter
        ? `, adapter ${runtime.info.adapter.description}${
          runtime.info.adapter.isFallbackAdapter ? " (fallback)" : ""
        }`
        : "";
      const target = backend === "cpu" ? " (target >= 0.5)" : "";
      console.log(
        `${backend}: batch ${plan.batch} x seq ${plan.seq}, ${
          (flops / 1e9).toFixed(2)
        } GFLOP/step: ` +
          `train step ${(seconds * 1000).toFixed(0)} ms = ${giga(train)}; bare MatMul ` +
          `${giga(mat)}; ratio ${(train / mat).toFixed(2)}${target}; threads ` +
          `${runtime.info.threads}${adapter}`,
      );
    } finally {
      await runtime.close();
    }
  }
  console.log(`peak memory (rss): ${(peakRss / 2 ** 20).toFixed(0)} MiB`);
}
