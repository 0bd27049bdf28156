/**
 * What the backend tests compare across runtimes and graph forms: a model's logits of one prompt,
 * greedy generation of two prompts through the KV cache, and supervised steps' losses.
 */
import assert from "node:assert/strict";
import type { HfModel } from "../../adapters/hf/mod.ts";
import { createGenerator, type TokenChooser } from "../../adapters/model/generate.ts";
import { buildLogitsGraph, MODEL_IO } from "../../adapters/model/graphs.ts";
import type { DecoderSpec } from "../../adapters/model/parameters.ts";
import { openSupervisedTrainer, type SupervisedExample } from "../../adapters/model/supervised.ts";
import { uploadBase } from "../../adapters/model/weights.ts";
import { hostTensor, type Runtime } from "../../adapters/onnx/runtime/mod.ts";
import { maxAbsDiff } from "./helpers.ts";

/**
 * Config overrides that let the tiny fixture fuse every FUSED_OPS: GroupQueryAttention takes head
 * sizes that are multiples of 8 (the fixture's is 4).
 */
export const FUSABLE_HEADS = { head_dim: 8 };

/** The prompt whose logits are compared (every position). */
export const TRACE_PROMPT = [3, 17, 250, 9, 44];

const examples: SupervisedExample[] = [
  { tokens: [10, 11, 12, 13, 14, 15], lossSpans: [[2, 6]] },
  { tokens: [20, 21, 22, 23], lossSpans: [[1, 4]] },
];

/** One runtime's answers for `spec` of `model`. */
export interface BackendTrace {
  /** [TRACE_PROMPT.length, vocab] row-major. */
  readonly logits: number[];
  /**
   * Greedy generation through each kind of KV cache: the tokens per prompt, and the logits each
   * token was chosen from (prompt by prompt, step by step), the prefill's last position first.
   */
  readonly generations: Readonly<Record<"host" | "device", TraceGeneration>>;
  readonly losses: number[];
}

/** One greedy generation of the trace's prompts. */
export interface TraceGeneration {
  readonly tokens: (readonly number[])[];
  readonly logits: number[][];
}

/**
 * A left-padded batch; the third prompt is longer than 32 tokens, where onnxruntime-node's WebGPU
 * GroupQueryAttention computed prompts wrongly (so `attention` stays out of prefill).
 */
const GENERATION_PROMPTS = [
  [1, 2, 3],
  [4],
  Array.from({ length: 40 }, (_, i) => (i * 7 + 5) % 200),
];

/**
 * Logits of TRACE_PROMPT, 4 greedy tokens after each of GENERATION_PROMPTS through
 * the host and the device KV cache, and the losses of `steps` supervised steps from the model's
 * weights.
 *
 * @example
 * ```ts
 * import type { HfModel } from "../../adapters/hf/mod.ts";
 * import { decoderSpec } from "../../adapters/model/parameters.ts";
 * import type { Runtime } from "../../adapters/onnx/runtime/mod.ts";
 * import { backendTrace } from "./backend-trace.ts";
 *
 * declare const rt: Runtime;
 * declare const model: HfModel;
 * const trace = await backendTrace(rt, decoderSpec(model.config), model, 2);
 * ```
 */
export async function backendTrace(
  rt: Runtime,
  spec: DecoderSpec,
  model: HfModel,
  steps: number,
): Promise<BackendTrace> {
  const seq = TRACE_PROMPT;
  const base = uploadBase(rt, spec, model.tensors);
  const session = await rt.load(buildLogitsGraph(spec).model);
  const logits = (await session.run({
    ...base.feeds,
    [MODEL_IO.tokens]: hostTensor("int32", [1, seq.length], seq),
    [MODEL_IO.attentionMask]: hostTensor("float32", [1, seq.length], seq.map(() => 1)),
  })).host[MODEL_IO.logits].data as Float32Array;
  await session.release();
  const generate = async (cache: "host" | "device"): Promise<TraceGeneration> => {
    const gen = await createGenerator(rt, spec, { cache });
    const logits: number[][] = GENERATION_PROMPTS.map(() => []);
    const greedy: TokenChooser = (row, prompt) => {
      logits[prompt].push(...row);
      return row.indexOf(Math.max(...row));
    };
    const rows = await gen.generate(base.feeds, {
      prompts: GENERATION_PROMPTS,
      maxTokens: 4,
      temperature: 0,
      choose: greedy,
    });
    await gen.release();
    return { tokens: rows.map((r) => r.tokens), logits };
  };
  const generations = { host: await generate("host"), device: await generate("device") };
  base.release();
  const initial = Object.fromEntries(
    [...model.tensors.values()].map((t) => [t.name, hostTensor("float32", t.shape, t.data)]),
  );
  const trainer = await openSupervisedTrainer(rt, spec, initial);
  const losses = [];
  for (let i = 0; i < steps; i++) {
    losses.push((await trainer.step(examples, { lr: 1e-2, weightDecay: 0, maxGradNorm: 10 })).loss);
  }
  await trainer.release();
  return { logits: [...logits], generations, losses };
}

/**
 * Throws unless `got`'s generations through both caches pick `want`'s tokens from logits within
 * `tolerance` (absolute) of `want`'s, step by step.
 */
export function assertGenerationsAgree(
  got: BackendTrace,
  want: BackendTrace,
  tolerance: number,
): void {
  for (const cache of ["host", "device"] as const) {
    const [g, w] = [got.generations[cache], want.generations[cache]];
    assert.deepEqual(g.tokens, w.tokens, `${cache} cache tokens`);
    g.logits.forEach((row, prompt) => {
      assert.equal(row.length, w.logits[prompt].length);
      const diff = maxAbsDiff(row, w.logits[prompt]);
      assert.ok(diff < tolerance, `${cache} cache, prompt ${prompt}: logits differ by ${diff}`);
    });
  }
}
