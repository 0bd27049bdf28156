/**
 * Batched generation with a KV cache, on the continuous batch (continuous-batch.ts): one prefill
 * over the left-padded distinct prompts (rows with the same prompt, a group's samples, share one
 * prefill and copy its cache rows), then one decode run per new token, the cache staying on the
 * device between runs (on the cpu and wasm backends in host memory, grown in place: each decode
 * returns only the new token's keys and values); finished rows leave the decode batch (their
 * cache rows are gathered out once they are a quarter of it), so they stop costing compute. The host picks each token from
 * the logits through a caller-given `TokenChooser` (the engine passes temperature / top-p
 * sampling over Philox keyed draws, so every token is a pure function of its coordinates), and
 * records the token's log-probability under the policy that sampled it: log softmax(logits / T)
 * at the request's temperature, the number the train step recomputes for the same token (veRL
 * and TRL divide the logits by the sampling temperature the same way).
 */
import type { Runtime } from "../onnx/runtime/mod.ts";
import {
  type BatchOptions,
  type BatchSessions,
  type ContinuousBatch,
  type GeneratedRow,
  openContinuousBatch,
  type StopStrings,
} from "./continuous-batch.ts";
import { ModelError } from "./errors.ts";
import {
  buildAppendDecodeGraph,
  buildCacheRowsGraph,
  buildCacheSpliceGraph,
  buildDecodeGraph,
  buildPrefillGraph,
  type ModelGraph,
} from "./graphs.ts";
import type { DecoderSpec } from "./parameters.ts";
import type { ParamFeeds } from "./weights.ts";

export {
  type FinishReason,
  type GeneratedRow,
  type StopStrings,
  tokenLogprob,
} from "./continuous-batch.ts";

/**
 * Picks the next token of row `row` from its logits (float32 [vocab]); `index` is the position of
 * the token within the row's generated tokens (the draw index).
 */
export type TokenChooser = (logits: Float32Array, row: number, index: number) => number;

/** One batched generation. */
export interface GenerationRequest {
  /** Token ids per row (at least one each); rows are left-padded to the longest. */
  readonly prompts: readonly (readonly number[])[];
  /** New tokens per row at most. */
  readonly maxTokens: number;
  readonly choose: TokenChooser;
  /**
   * The temperature `choose` samples at: logprobs are of softmax(logits / T); 0 (greedy) records
   * them at T = 1 (see `logprobTemperature`).
   */
  readonly temperature: number;
  /** Tokens that end a row (kept as its last token). */
  readonly stopTokenIds?: readonly number[];
  readonly stop?: StopStrings;
  /** Token fed at padding and after a row has finished (masked out either way); default 0. */
  readonly padTokenId?: number;
  /**
   * Prefill each distinct prompt once and copy its cache to the rows that share it (default
   * true); false prefills every row, for comparison.
   */
  readonly sharePrompts?: boolean;
  /**
   * Finished rows leave the decode batch (their cache rows are gathered out on the device once
   * they are a quarter of it), so later steps run on fewer rows (default true); false keeps every
   * row to the end, fed padding, for comparison.
   */
  readonly dropFinished?: boolean;
}

/** Loaded prefill, decode and cache graphs of one decoder spec on one runtime. */
export interface Generator {
  readonly kind: "generator";
  readonly spec: DecoderSpec;
  /** Runs one batch to its end; `params` feeds every `param:<name>` input (base and adapter). */
  generate(params: ParamFeeds, request: GenerationRequest): Promise<GeneratedRow[]>;
  /**
   * Opens a continuous batch on `params`: sequences submitted to it join and leave the running
   * decode batch between steps. Close it before releasing the generator.
   */
  openBatch(params: ParamFeeds, options?: BatchOptions): ContinuousBatch;
  release(): Promise<void>;
}

/** Where a generator keeps the KV cache. */
export interface GeneratorOptions {
  /**
   * `device`: in the runtime's device tensors, grown by the decode graph (a copy per token) and
   * spliced by graphs; `host`: in host memory, grown in place (host-kv-cache.ts). Default: `device`
   * on the WebGPU EP (webgpu and webgpu-web: the cache stays on the GPU), `host` elsewhere (device
   * memory is the host's).
   */
  readonly cache?: "device" | "host";
}

/**
 * Builds and loads the prefill, decode and cache graphs of `spec`.
 *
 * @example
 * ```ts
 * import type { Runtime } from "../onnx/runtime/mod.ts";
 * import { createGenerator, type TokenChooser } from "./generate.ts";
 * import type { DecoderSpec } from "./parameters.ts";
 * import type { BaseWeights, ParamFeeds } from "./weights.ts";
 *
 * declare const runtime: Runtime;
 * declare const spec: DecoderSpec;
 * declare const base: BaseWeights; // uploadBase(runtime, spec, tensors)
 * declare const adapter: ParamFeeds; // adapterHostFeeds(spec, lora), or {} for the base alone
 * declare const prompts: number[][];
 * declare const choose: TokenChooser;
 * const gen = await createGenerator(runtime, spec);
 * const params = { ...base.feeds, ...adapter };
 * const rows = await gen.generate(params, { prompts, maxTokens: 32, temperature: 1, choose });
 * ```
 */
export async function createGenerator(
  runtime: Runtime,
  spec: DecoderSpec,
  options: GeneratorOptions = {},
): Promise<Generator> {
  const load = (g: ModelGraph, name: string) =>
    runtime.load(g.model, { keepOnDevice: g.keepOnDevice, name });
  const cache = options.cache ?? (runtime.info.executionProvider === "webgpu" ? "device" : "host");
  const sessions: BatchSessions = cache === "device"
    ? {
      kind: "device-cache",
      prefill: await load(buildPrefillGraph(spec), "prefill"),
      decode: await load(buildDecodeGraph(spec), "decode"),
      cacheRows: await load(buildCacheRowsGraph(spec), "cache-rows"),
      cacheSelect: await load(buildCacheSpliceGraph(spec, { join: false }), "cache-select"),
      cacheJoin: await load(buildCacheSpliceGraph(spec, { join: true }), "cache-join"),
    }
    : {
      kind: "host-cache",
      prefill: await runtime.load(buildPrefillGraph(spec).model, { name: "prefill" }),
      decode: await load(buildAppendDecodeGraph(spec), "append-decode"),
    };
  return Object.freeze({
    kind: "generator",
    spec,
    generate: (params: ParamFeeds, request: GenerationRequest) =>
      runGeneration(
        openContinuousBatch(spec, sessions, params, {
          padTokenId: request.padTokenId,
          sharePrompts: request.sharePrompts,
          dropFinished: request.dropFinished,
          maxRows: Math.max(1, request.prompts.length),
        }),
        request,
      ),
    openBatch: (params: ParamFeeds, options?: BatchOptions) =>
      openContinuousBatch(spec, sessions, params, options),
    release: async () => {
      const { kind: _, ...loaded } = sessions;
      for (const s of Object.values(loaded)) await s.release();
    },
  });
}

/** Every row submitted at once, stepped until all have ended. */
async function runGeneration(
  batch: ContinuousBatch,
  request: GenerationRequest,
): Promise<GeneratedRow[]> {
  try {
    const sequences = request.prompts.map((prompt, row) => {
      try {
        return batch.submit({
          prompt,
          maxTokens: request.maxTokens,
          temperature: request.temperature,
          stopTokenIds: request.stopTokenIds,
          stop: request.stop,
          choose: (logits, index) => request.choose(logits, row, index),
        });
      } catch (err) {
        if (err instanceof ModelError && err.field === "prompt") {
          throw new ModelError(`prompts[${row}]`, err.detail);
        }
        throw err;
      }
    });
    while (batch.running + batch.queued > 0) await batch.step();
    return await Promise.all(sequences.map((s) => s.result));
  } finally {
    await batch.close();
  }
}
