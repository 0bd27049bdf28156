/**
 * What the backend tests compare across runtimes and graph forms: a model's logits of one prompt,
 * greedy generation of two prompts through the KV cache, and supervised steps' losses.
 */
import type { HfModel } from "../../adapters/hf/mod.ts";
import { createGenerator, type TokenChooser } from "../../adapters/model/generate.ts";
import { buildLogitsGraph, MODEL_IO } from "../../adapters/model/graphs.ts";
import type { DecoderSpec } from "../../adapters/model/parameters.ts";
import { openSupervisedTrainer, type SupervisedExample } from "../../adapters/model/supervised.ts";
import { uploadBase } from "../../adapters/model/weights.ts";
import { hostTensor, type Runtime } from "../../adapters/onnx/runtime/mod.ts";

/** The prompt whose logits are compared (every position). */
export const TRACE_PROMPT = [3, 17, 250, 9, 44];

const greedy: TokenChooser = (logits) => logits.indexOf(Math.max(...logits));
const examples: SupervisedExample[] = [
  { tokens: [10, 11, 12, 13, 14, 15], lossSpans: [[2, 6]] },
  { tokens: [20, 21, 22, 23], lossSpans: [[1, 4]] },
];

/** One runtime's answers for `spec` of `model`. */
export interface BackendTrace {
  /** [TRACE_PROMPT.length, vocab] row-major. */
  readonly logits: number[];
  readonly tokens: (readonly number[])[];
  readonly losses: number[];
}

/**
 * Logits of TRACE_PROMPT, 4 greedy tokens after [1, 2, 3] and [4], and the losses of `steps`
 * supervised steps from the model's weights.
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
  const gen = await createGenerator(rt, spec);
  const rows = await gen.generate(base.feeds, {
    prompts: [[1, 2, 3], [4]],
    maxTokens: 4,
    temperature: 0,
    choose: greedy,
  });
  await gen.release();
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
  return { logits: [...logits], tokens: rows.map((r) => r.tokens), losses };
}
