/**
 * The ONNX graphs a policy model runs, all built by the one `decoder` function so they compute
 * the same function: the train-step policy, a token-logprob graph, and the prefill and decode
 * graphs of KV-cache generation. Parameters are graph inputs named like the train step's
 * (`param:<HF name>`), so one set of device tensors feeds every graph.
 */
import { concat, gather, Graph, toOnnxModel, type Value } from "../onnx/mod.ts";
import {
  type DropoutMaskSpec,
  IO,
  type PolicyFn,
  targetLogprobs,
  temperedLogSoftmax,
  type TrainStepConfig,
} from "../onnx/train-step/mod.ts";
import { decoder, type KvPair } from "./decoder.ts";
import { loraTargets } from "./lora.ts";
import { allParams, type DecoderSpec, trainableParams } from "./parameters.ts";

/** Graph input and output names of the model graphs (parameters use `IO.param`). */
export const MODEL_IO = Object.freeze({
  tokens: IO.tokens,
  targets: IO.targets,
  attentionMask: IO.attentionMask,
  /** float scalar: logits are divided by it (`logprobTemperature` of the sampling temperature). */
  temperature: IO.temperature,
  logits: "logits",
  logprobs: IO.logprobs,
  pastKey: (layer: number) => `past_key:${layer}`,
  pastValue: (layer: number) => `past_value:${layer}`,
  presentKey: (layer: number) => `present_key:${layer}`,
  presentValue: (layer: number) => `present_value:${layer}`,
  /** int32 [rows]: for each output row, the cache row it copies (prefix sharing). */
  cacheRows: "cache_rows",
  /** int32 [width]: for each output column (position), the cache column it copies. */
  cacheColumns: "cache_columns",
  /** A second cache spliced below the first (rows joining a running batch), by layer. */
  joinKey: (layer: number) => `join_key:${layer}`,
  joinValue: (layer: number) => `join_value:${layer}`,
  /** int32 [joinRows]: the rows of the joining cache to append, as `cacheRows` of the first. */
  joinRows: "join_rows",
  /** int32 [width]: the columns of the joining cache, as `cacheColumns` of the first. */
  joinColumns: "join_columns",
});

/** A serialized model graph and the outputs to keep on the device between runs. */
export interface ModelGraph {
  readonly kind: "model-graph";
  readonly name: string;
  readonly model: Uint8Array;
  readonly keepOnDevice: readonly string[];
}

/**
 * The policy the train-step builder calls: logits [batch, seq, vocab] from its params and tokens,
 * with LoRA dropout where the train step feeds masks (named by module, see `loraDropoutMasks`).
 *
 * @example
 * ```ts
 * import { buildTrainStep } from "../onnx/train-step/mod.ts";
 * import { policyFn } from "./graphs.ts";
 * import { allParams, type DecoderSpec } from "./parameters.ts";
 *
 * declare const spec: DecoderSpec;
 * buildTrainStep({ policy: policyFn(spec), params: allParams(spec), trainable: "all" }, "fused");
 * ```
 */
export function policyFn(spec: DecoderSpec): PolicyFn {
  return ({ params, tokens, attentionMask, dropoutMasks }) =>
    decoder(spec, { params, tokens, attentionMask, loraDropoutMasks: dropoutMasks }, "full")
      .logits;
}

/**
 * One dropout mask per LoRA target, named by its module, [batch, seq, inFeatures], when the spec's
 * LoRA has dropout > 0; none otherwise, so a dropout-free adapter's graphs carry no mask input.
 * Each module gets its own mask: PEFT builds one nn.Dropout per adapted layer.
 *
 * @example
 * ```ts
 * import { loraDropoutMasks } from "./graphs.ts";
 * import type { DecoderSpec } from "./parameters.ts";
 *
 * declare const spec: DecoderSpec; // with LoRA dropout > 0
 * loraDropoutMasks(spec).map((m) => m.name); // ["model.layers.0.self_attn.q_proj", ...]
 * ```
 */
export function loraDropoutMasks(spec: DecoderSpec): DropoutMaskSpec[] {
  if (spec.lora === null || spec.lora.dropout === 0) return [];
  return loraTargets(spec.config, spec.lora).map((t) =>
    Object.freeze({ name: t.module, width: t.inFeatures })
  );
}

/**
 * The structural part of a train-step config for `spec`: policy, every parameter, which train
 * (LoRA matrices with a frozen base, or all base parameters), the LoRA dropout masks, and the
 * gradient norm's order (stacked where `spec.fused` names grad_norm).
 *
 * @example
 * ```ts
 * import { buildTrainStep } from "../onnx/train-step/mod.ts";
 * import { trainStepConfig } from "./graphs.ts";
 * import type { DecoderSpec } from "./parameters.ts";
 *
 * declare const spec: DecoderSpec;
 * buildTrainStep({ ...trainStepConfig(spec), kl: "k3" }, "fused");
 * ```
 */
export function trainStepConfig(
  spec: DecoderSpec,
): Pick<TrainStepConfig, "policy" | "params" | "trainable" | "dropoutMasks" | "gradNorm"> {
  return {
    policy: policyFn(spec),
    params: allParams(spec),
    trainable: trainableParams(spec).map((p) => p.name),
    dropoutMasks: loraDropoutMasks(spec),
    gradNorm: spec.fused.includes("grad_norm") ? "stacked" : "per-tensor",
  };
}

function paramInputs(g: Graph, spec: DecoderSpec): Record<string, Value> {
  const params: Record<string, Value> = {};
  for (const p of allParams(spec)) {
    params[p.name] = g.input(IO.param(p.name), p.dtype ?? "float32", p.shape);
  }
  return params;
}

function finish(g: Graph, keepOnDevice: readonly string[] = []): ModelGraph {
  return Object.freeze({
    kind: "model-graph",
    name: g.name,
    model: toOnnxModel(g),
    keepOnDevice: Object.freeze([...keepOnDevice]),
  });
}

/**
 * Per-token log-probabilities of `targets` under the model at a temperature, float32
 * [batch, seq]: log softmax(logits / T) picked at the target, the numbers the train step's
 * objective recomputes (the same `temperedLogSoftmax`), without dropout.
 *
 * @example
 * ```ts
 * import type { Runtime } from "../onnx/runtime/mod.ts";
 * import { buildLogprobGraph } from "./graphs.ts";
 * import type { DecoderSpec } from "./parameters.ts";
 *
 * declare const runtime: Runtime;
 * declare const spec: DecoderSpec;
 * const g = buildLogprobGraph(spec);
 * const s = await runtime.load(g.model);
 * ```
 */
export function buildLogprobGraph(spec: DecoderSpec): ModelGraph {
  const g = new Graph("logprobs");
  const params = paramInputs(g, spec);
  const tokens = g.input(MODEL_IO.tokens, "int32", ["batch", "seq"]);
  const targets = g.input(MODEL_IO.targets, "int32", ["batch", "seq"]);
  const attentionMask = g.input(MODEL_IO.attentionMask, "float32", ["batch", "seq"]);
  const temperature = g.input(MODEL_IO.temperature, "float32", []);
  const logits = decoder(spec, { params, tokens, attentionMask }, "full").logits;
  g.output(targetLogprobs(temperedLogSoftmax(logits, temperature), targets), MODEL_IO.logprobs);
  return finish(g);
}

/**
 * Logits at every position, float32 [batch, seq, vocab] (the full recompute generation is checked
 * against, and the benchmark's no-cache baseline).
 */
export function buildLogitsGraph(spec: DecoderSpec): ModelGraph {
  const g = new Graph("logits");
  const params = paramInputs(g, spec);
  const tokens = g.input(MODEL_IO.tokens, "int32", ["batch", "seq"]);
  const attentionMask = g.input(MODEL_IO.attentionMask, "float32", ["batch", "seq"]);
  g.output(decoder(spec, { params, tokens, attentionMask }, "full").logits, MODEL_IO.logits);
  return finish(g);
}

function publishCache(g: Graph, present: readonly KvPair[]): string[] {
  return present.flatMap((kv, i) => [
    g.output(kv.key, MODEL_IO.presentKey(i)).name,
    g.output(kv.value, MODEL_IO.presentValue(i)).name,
  ]);
}

/**
 * Prefill: a left-padded prompt batch -> logits of the last position [batch, vocab] and every
 * layer's keys/values [batch, kvHeads, seq, headDim] (kept on the device).
 */
export function buildPrefillGraph(spec: DecoderSpec): ModelGraph {
  const g = new Graph("prefill");
  const params = paramInputs(g, spec);
  const tokens = g.input(MODEL_IO.tokens, "int32", ["batch", "seq"]);
  const attentionMask = g.input(MODEL_IO.attentionMask, "float32", ["batch", "seq"]);
  const out = decoder(spec, { params, tokens, attentionMask }, "prefill");
  g.output(out.logits, MODEL_IO.logits);
  return finish(g, publishCache(g, out.present));
}

/**
 * Decode: one token per row [batch, 1], the mask over cached positions plus the new one
 * [batch, past+1], each layer's cache [batch, kvHeads, past, headDim] -> logits [batch, vocab]
 * and the grown cache (kept on the device).
 */
export function buildDecodeGraph(spec: DecoderSpec): ModelGraph {
  return decodeGraph(spec, "decode");
}

/**
 * Append decode: like `buildDecodeGraph`, but the cache [batch, kvHeads, capacity, headDim] has
 * room beyond its real positions (the mask [batch, capacity+1] marks them, then the new token)
 * and the outputs are the logits and only the new token's keys/values [batch, kvHeads, 1,
 * headDim], on the host: the caller writes them into its cache in place, so no run copies the
 * cache (the concatenation `buildDecodeGraph` outputs costs a copy of it per token).
 *
 * @example
 * ```ts
 * import { buildAppendDecodeGraph } from "./graphs.ts";
 * import type { DecoderSpec } from "./parameters.ts";
 *
 * declare const spec: DecoderSpec;
 * const g = buildAppendDecodeGraph(spec); // outputs logits, present_key:i, present_value:i
 * ```
 */
export function buildAppendDecodeGraph(spec: DecoderSpec): ModelGraph {
  return decodeGraph(spec, "append");
}

function decodeGraph(spec: DecoderSpec, mode: "decode" | "append"): ModelGraph {
  const c = spec.config;
  const g = new Graph(mode === "decode" ? "decode" : "append-decode");
  const positions = mode === "decode" ? "past" : "capacity";
  const params = paramInputs(g, spec);
  const tokens = g.input(MODEL_IO.tokens, "int32", ["batch", 1]);
  const cacheShape = ["batch", c.numKvHeads, positions, c.headDim];
  const past = Array.from({ length: c.numLayers }, (_, i) => ({
    key: g.input(MODEL_IO.pastKey(i), "float32", cacheShape),
    value: g.input(MODEL_IO.pastValue(i), "float32", cacheShape),
  }));
  const attentionMask = g.input(MODEL_IO.attentionMask, "float32", ["batch", `${positions}+1`]);
  const out = decoder(spec, { params, tokens, attentionMask, past }, mode);
  g.output(out.logits, MODEL_IO.logits);
  const cache = publishCache(g, out.present);
  // The grown cache stays on the device; appended keys/values go to the host cache.
  return finish(g, mode === "decode" ? cache : []);
}

/**
 * Cache rows: each layer's keys/values [batch, kvHeads, past, headDim] -> [rows, ...] with row r
 * a copy of cache row `cache_rows[r]`, on the device. Generation prefills each distinct prompt
 * once and copies its cache to every row that shares it.
 *
 * @example
 * ```ts
 * import { buildCacheRowsGraph } from "./graphs.ts";
 * import type { DecoderSpec } from "./parameters.ts";
 *
 * declare const spec: DecoderSpec;
 * const g = buildCacheRowsGraph(spec); // inputs past_key:i, cache_rows; outputs present_key:i
 * ```
 */
export function buildCacheRowsGraph(spec: DecoderSpec): ModelGraph {
  const c = spec.config;
  const g = new Graph("cache-rows");
  const cacheShape = ["batch", c.numKvHeads, "past", c.headDim];
  const rows = g.input(MODEL_IO.cacheRows, "int32", ["rows"]);
  const present = Array.from({ length: c.numLayers }, (_, i) => ({
    key: gather(g.input(MODEL_IO.pastKey(i), "float32", cacheShape), rows, 0),
    value: gather(g.input(MODEL_IO.pastValue(i), "float32", cacheShape), rows, 0),
  }));
  return finish(g, publishCache(g, present));
}

/**
 * Cache splice, for continuous batching: each layer's running cache [batch, kvHeads, past,
 * headDim] -> [rows, kvHeads, width, headDim], row r and column c a copy of row `cache_rows[r]`
 * and column `cache_columns[c]`; with `join`, the rows of a second cache (newcomers' prefill,
 * `join_key:i`, picked by `join_rows` and `join_columns`) are appended below. The caches are
 * left-padded, so a shorter part is padded by repeating a column on the left (any finite keys
 * do: the attention mask gives padding columns weight exactly 0) and leading columns that are
 * padding in every row are trimmed by starting the columns later.
 *
 * @example
 * ```ts
 * import { buildCacheSpliceGraph } from "./graphs.ts";
 * import type { DecoderSpec } from "./parameters.ts";
 *
 * declare const spec: DecoderSpec;
 * const g = buildCacheSpliceGraph(spec, { join: true }); // running rows, then newcomers
 * ```
 */
export function buildCacheSpliceGraph(spec: DecoderSpec, options: { join: boolean }): ModelGraph {
  const c = spec.config;
  const g = new Graph(options.join ? "cache-join" : "cache-select");
  const cacheShape = (batch: string, past: string) => [batch, c.numKvHeads, past, c.headDim];
  const rows = g.input(MODEL_IO.cacheRows, "int32", ["rows"]);
  const columns = g.input(MODEL_IO.cacheColumns, "int32", ["width"]);
  const join = options.join
    ? {
      rows: g.input(MODEL_IO.joinRows, "int32", ["join_rows"]),
      columns: g.input(MODEL_IO.joinColumns, "int32", ["width"]),
    }
    : null;
  // Rows first: the column gather then copies only the rows that stay.
  const pick = (x: Value, r: Value, cols: Value) => gather(gather(x, r, 0), cols, 2);
  const present = Array.from({ length: c.numLayers }, (_, i) => {
    const part = (name: string, joinName: string) => {
      const running = pick(g.input(name, "float32", cacheShape("batch", "past")), rows, columns);
      if (join === null) return running;
      const newcomers = g.input(joinName, "float32", cacheShape("join_batch", "join_past"));
      return concat([running, pick(newcomers, join.rows, join.columns)], 0);
    };
    return {
      key: part(MODEL_IO.pastKey(i), MODEL_IO.joinKey(i)),
      value: part(MODEL_IO.pastValue(i), MODEL_IO.joinValue(i)),
    };
  });
  return finish(g, publishCache(g, present));
}
