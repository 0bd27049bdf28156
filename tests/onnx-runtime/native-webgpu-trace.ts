/**
 * Train steps whose every number is kept for comparison: the metrics of each step and, after the
 * last, every device state tensor (parameters, Adam moments and step, gradient accumulators).
 * native-webgpu_test.ts computes the cpu trace in its own process and runs this file as a child
 * for the native webgpu backend, whose process needs the software Vulkan set at launch:
 *
 *   deno run -A tests/onnx-runtime/native-webgpu-trace.ts BACKEND CASE OUT.json
 */
import {
  type BackendName,
  type HostTensor,
  hostTensor,
  openRuntime,
} from "../../adapters/onnx/runtime/mod.ts";
import { openTrainStep, type TrainStepHyper } from "../../adapters/onnx/train-step/runner.ts";
import type { PolicyBatch } from "../../adapters/onnx/train-step/batch.ts";
import type { TrainStepConfig } from "../../adapters/onnx/train-step/spec.ts";
import { decoderParams, decoderPolicy, type DecoderSizes } from "../bench/onnx-bench-model.ts";
import {
  stream,
  tinyBatch,
  tinyParams,
  tinyPolicy,
  tinyWeights,
} from "../onnx-train/tiny-policy.ts";

/** The numbers of one traced run. */
export interface Trace {
  readonly backend: string;
  /** Per step: loss, policy loss, KL loss, clip fraction, approx KL, entropy, grad norm. */
  readonly metrics: number[][];
  /** Every state tensor after the last step, by name, and where it lived. */
  readonly state: Record<string, number[]>;
  readonly locations: Record<string, string>;
}

interface TraceCase {
  readonly config: TrainStepConfig;
  readonly initial: Readonly<Record<string, HostTensor>>;
  readonly batches: readonly PolicyBatch[];
  /** Sequences per micro-batch: the accumulate and apply graphs instead of the fused step. */
  readonly microBatchSize?: number;
}

/** The step's hyperparameters (clip, KL and weight decay all active). */
export const hyper: TrainStepHyper = {
  lr: 0.01,
  clipLow: 0.2,
  clipHigh: 0.28,
  klCoef: 0.1,
  weightDecay: 0.01,
  maxGradNorm: 1,
  temperature: 0.9,
};

const tiny = { vocab: 16, dim: 8, hidden: 16, rank: 0 };
const decoder: DecoderSizes = { vocab: 96, dim: 32, heads: 2, layers: 2 };

/** Bench-decoder weights: norms at 1, matrices uniform in +-1/sqrt(fan-in), as onnx-bench. */
export function decoderWeights(sizes: DecoderSizes, seed: number): Record<string, HostTensor> {
  const next = stream(seed);
  return Object.fromEntries(
    decoderParams(sizes).map((p) => {
      const n = p.shape.reduce((a, b) => a * b, 1);
      const scale = 1 / Math.sqrt(p.shape[0]);
      const data = p.name.includes("norm")
        ? new Float32Array(n).fill(1)
        : Float32Array.from({ length: n }, () => (next() * 2 - 1) * scale);
      return [p.name, hostTensor("float32", p.shape, data)];
    }),
  );
}

const tinyCase = (): TraceCase => ({
  config: {
    policy: tinyPolicy(tiny),
    params: tinyParams(tiny),
    aggregation: "seq-mean-token-mean",
    kl: "k3",
  },
  initial: tinyWeights(tiny, 7),
  batches: [1, 2, 3].map((seed) => tinyBatch(tiny, 6, 10, seed)),
});

/**
 * The cases the test compares: the tiny policy's fused step and its micro-batched one (gradient
 * accumulators), and the bench decoder micro-batched.
 */
export const traceCases: Readonly<Record<string, () => TraceCase>> = {
  tiny: tinyCase,
  "tiny-micro": () => ({ ...tinyCase(), microBatchSize: 2 }),
  decoder: () => ({
    config: { policy: decoderPolicy(decoder), params: decoderParams(decoder), kl: "k3" },
    initial: decoderWeights(decoder, 10),
    batches: [5, 6].map((seed) => tinyBatch({ ...tiny, vocab: decoder.vocab }, 4, 12, seed)),
    microBatchSize: 2,
  }),
};

/**
 * Runs a case's steps on a fresh runtime of `backend` and collects its numbers.
 *
 * @example
 * ```ts
 * import { traceTrainSteps } from "./native-webgpu-trace.ts";
 *
 * const cpu = await traceTrainSteps("cpu", "tiny");
 * const gpu = await traceTrainSteps("webgpu", "tiny"); // compared with cpu's
 * ```
 */
export async function traceTrainSteps(backend: BackendName, name: string): Promise<Trace> {
  const make = traceCases[name];
  if (!make) throw new Error(`no trace case ${name}; known: ${Object.keys(traceCases)}`);
  const c = make();
  const runtime = await openRuntime(backend, { threads: 2 });
  try {
    const runner = await openTrainStep({
      runtime,
      config: c.config,
      initial: c.initial,
      microBatchSize: c.microBatchSize,
    });
    const metrics: number[][] = [];
    for (const batch of c.batches) {
      const m = await runner.step(batch, hyper);
      if (m.skipped) throw new Error(`${backend} ${name}: a step was skipped (non-finite)`);
      metrics.push([
        m.loss,
        m.policyLoss,
        m.klLoss,
        m.clipFraction,
        m.approxKl,
        m.entropy,
        m.gradNorm,
      ]);
    }
    const state: Record<string, number[]> = {};
    const locations: Record<string, string> = {};
    for (const key of runner.state.names()) {
      locations[key] = runner.state.get(key).location;
      state[key] = [...(await runner.state.read(key)).data];
    }
    await runner.release();
    return { backend: runtime.info.backend, metrics, state, locations };
  } finally {
    await runtime.close();
  }
}

if (import.meta.main) {
  const [backend, name, out] = Deno.args;
  const trace = await traceTrainSteps(backend as BackendName, name);
  await Deno.writeTextFile(out, JSON.stringify(trace));
}
