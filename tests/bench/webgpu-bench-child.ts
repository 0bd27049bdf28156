/**
 * One backend's figures for the webgpu suite (webgpu-bench.ts), run in a process of its own so
 * that the native backend's can start with the software Vulkan set at launch:
 *
 *   deno run -A tests/bench/webgpu-bench-child.ts BACKEND SHAPE   (prints one JSON line)
 *
 * Per shape: session creation (opening the runtime and loading the train step), the first step
 * (shader compilation), the fastest of the timed steps, and from onnxruntime's profile of a
 * second runner: kernels per step by execution provider and copies between host and device.
 */
import {
  type BackendName,
  openRuntime,
  runProfile,
  type SessionProfile,
} from "../../adapters/onnx/runtime/mod.ts";
import { openTrainStep, type TrainStepRunner } from "../../adapters/onnx/train-step/runner.ts";
import type { PolicyBatch } from "../../adapters/onnx/train-step/batch.ts";
import type { TrainStepConfig } from "../../adapters/onnx/train-step/spec.ts";
import type { HostTensor } from "../../adapters/onnx/runtime/mod.ts";
import { decoderWeights, hyper } from "../onnx-runtime/native-webgpu-trace.ts";
import { tinyBatch, tinyParams, tinyPolicy, tinyWeights } from "../onnx-train/tiny-policy.ts";
import { decoderParams, decoderPolicy, type DecoderSizes } from "./onnx-bench-model.ts";

interface Shape {
  readonly label: string;
  readonly config: TrainStepConfig;
  readonly initial: Readonly<Record<string, HostTensor>>;
  readonly batch: PolicyBatch;
  readonly timedSteps: number;
}

const tiny = { vocab: 16, dim: 8, hidden: 16, rank: 0 };
// The onnx suite's decoder at its software-adapter batch (1 x 32).
const decoder: DecoderSizes = { vocab: 512, dim: 256, heads: 4, layers: 2 };

/** The shapes the suite measures. */
export const shapes: Readonly<Record<string, () => Shape>> = {
  tiny: () => ({
    label: "tiny policy 6x10",
    config: { policy: tinyPolicy(tiny), params: tinyParams(tiny), kl: "k3" },
    initial: tinyWeights(tiny, 7),
    batch: tinyBatch(tiny, 6, 10, 1),
    timedSteps: 5,
  }),
  decoder: () => ({
    label: "bench decoder 1x32",
    config: { policy: decoderPolicy(decoder), params: decoderParams(decoder), kl: "k3" },
    initial: decoderWeights(decoder, 10),
    batch: tinyBatch({ ...tiny, vocab: decoder.vocab }, 1, 32, 5),
    timedSteps: 3,
  }),
};

/** What one backend measured on one shape. */
export interface WebGpuFigures {
  readonly backend: string;
  readonly package: string;
  readonly shape: string;
  readonly createMs: number;
  readonly firstStepMs: number;
  readonly stepMs: number;
  /** Per step, from the profile: kernels by execution provider, copies each way. */
  readonly kernels: Readonly<Record<string, number>>;
  readonly toHost: number;
  readonly fromHost: number;
}

async function step(runner: TrainStepRunner, batch: PolicyBatch) {
  const m = await runner.step(batch, hyper);
  if (m.skipped) throw new Error("benchmark step was skipped: non-finite gradient");
}

/**
 * Measures `shape` on `backend`.
 *
 * @example
 * ```ts
 * import { measure } from "./webgpu-bench-child.ts";
 *
 * const figures = await measure("webgpu", "tiny");
 * ```
 */
export async function measure(backend: BackendName, name: string): Promise<WebGpuFigures> {
  const shape = shapes[name]();
  const open = (profile: boolean) => openRuntime(backend, { profile });
  const start = performance.now();
  const runtime = await open(false);
  const runner = await openTrainStep({ runtime, config: shape.config, initial: shape.initial });
  const created = performance.now();
  await step(runner, shape.batch);
  const firstStepMs = performance.now() - created;
  let stepMs = Infinity;
  for (let i = 0; i < shape.timedSteps; i++) {
    const t = performance.now();
    await step(runner, shape.batch);
    stepMs = Math.min(stepMs, performance.now() - t);
  }
  await runner.release();
  await runtime.close();

  // The profiler times every node, so its run is separate from the timed one.
  const profiled = await open(true);
  let profiles: readonly SessionProfile[];
  try {
    const r = await openTrainStep({
      runtime: profiled,
      config: shape.config,
      initial: shape.initial,
    });
    for (let i = 0; i < 3; i++) await step(r, shape.batch);
    await r.release();
    profiles = profiled.endProfiling();
  } finally {
    await profiled.close();
  }
  const run = runProfile(profiles.find((p) => p.session.startsWith("train-step"))!);
  const kernels: Record<string, number> = {};
  for (const op of run.ops) {
    if (op.clock !== "host" || op.op.startsWith("Memcpy")) continue;
    const provider = op.provider.replace("ExecutionProvider", "");
    kernels[provider] = (kernels[provider] ?? 0) + op.calls;
  }
  return {
    backend,
    package: runtime.info.onnxruntime.package,
    shape: shape.label,
    createMs: created - start,
    firstStepMs,
    stepMs,
    kernels,
    toHost: run.copies.toHost,
    fromHost: run.copies.fromHost,
  };
}

if (import.meta.main) {
  const [backend, name] = Deno.args;
  console.log(JSON.stringify(await measure(backend as BackendName, name)));
}
