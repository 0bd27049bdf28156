/**
 * Greedy generation on a tiny random Qwen3 model with the KV cache, for native-webgpu_test.ts:
 * the tokens of three rows and the logits every decode step chose from. On webgpu the cache stays
 * on the GPU (the generator's default there); the test compares with the cpu backend's host cache.
 *
 *   deno run -A tests/onnx-runtime/native-webgpu-generate.ts BACKEND OUT.json
 */
import { createGenerator, type TokenChooser } from "../../adapters/model/generate.ts";
import { decoderSpec } from "../../adapters/model/parameters.ts";
import { uploadBase } from "../../adapters/model/weights.ts";
import { type BackendName, openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { tinyModel } from "../model/helpers.ts";

/** What one backend generated. */
export interface GenerationTrace {
  readonly tokens: number[][];
  /** Every logits row the chooser saw, in call order. */
  readonly logits: number[][];
}

/**
 * Generates 6 tokens for three prompts on a fresh runtime of `backend`.
 *
 * @example
 * ```ts
 * import { traceGeneration } from "./native-webgpu-generate.ts";
 *
 * const cpu = await traceGeneration("cpu");
 * const gpu = await traceGeneration("webgpu"); // the same tokens, each logit within 1e-4
 * ```
 */
export async function traceGeneration(backend: BackendName): Promise<GenerationTrace> {
  const model = await tinyModel("Qwen3ForCausalLM");
  const spec = decoderSpec(model.config);
  const runtime = await openRuntime(backend, { threads: 2 });
  try {
    const base = uploadBase(runtime, spec, model.tensors);
    const gen = await createGenerator(runtime, spec);
    const logits: number[][] = [];
    const greedy: TokenChooser = (row) => {
      logits.push([...row]);
      return row.indexOf(Math.max(...row));
    };
    const rows = await gen.generate(base.feeds, {
      prompts: [[1, 2, 3], [4], [5, 6]],
      maxTokens: 6,
      temperature: 0,
      choose: greedy,
    });
    await gen.release();
    base.release();
    return { tokens: rows.map((r) => [...r.tokens]), logits };
  } finally {
    await runtime.close();
  }
}

if (import.meta.main) {
  const [backend, out] = Deno.args;
  await Deno.writeTextFile(out, JSON.stringify(await traceGeneration(backend as BackendName)));
}
