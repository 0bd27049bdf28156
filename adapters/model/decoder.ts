/**
 * The decoder-only transformer of the Qwen2 / Qwen3 / Llama family on the graph IR, top to bottom:
 *
 *   tokens -> embedding -> L x [ x += attn(rmsnorm(x)); x += mlp(rmsnorm(x)) ] -> rmsnorm -> head
 *
 * - attention: q/k/v projections (biases where the family has them), per-head RMSNorm on q and k
 *   (Qwen3), rotary position embedding (HF's rotate-half layout), grouped-query attention (each kv
 *   head serves numHeads / numKvHeads query heads through a broadcasting MatMul, no copies),
 *   causal + padding mask, softmax, output projection;
 * - mlp: SwiGLU, down(silu(gate(x)) * up(x));
 * - head: lm_head, or the embedding matrix when tied.
 * LoRA, when the spec has it, adds `scale * (x A^T) B^T` to each targeted projection; in the train
 * step, with dropout masks, `scale * ((mask * x) A^T) B^T` (PEFT's `lora_B(lora_A(dropout(x)))`).
 *
 * Positions come from the attention mask (position = number of real tokens before this one), so
 * left-padded generation batches and right-padded training batches give every token the same
 * position and the same logits. Only ops the WebGPU EP keeps on the GPU are used: no LogSoftmax,
 * OneHot, ConstantOfShape, Range or CumSum; token ids are int32.
 *
 * Three modes share this one code path:
 * - `full`:   logits at every position [batch, seq, vocab] (train step, logprob graph);
 * - `prefill`: logits at the last position [batch, vocab] and every layer's keys/values;
 * - `decode`: one new token per row attending to cached keys/values; logits [batch, vocab] and
 *   the grown cache (past and new keys/values concatenated: a copy of the whole cache per token);
 * - `append`: the same attention, the new token's keys/values kept apart from the cache (scores
 *   over both, weights split back), and only the new token's keys/values as output, for a caller
 *   that writes them into a cache it keeps with room to grow (the host cache of the cpu backend).
 */
import { type ModelConfig, ropeInverseFrequencies } from "../hf/mod.ts";
import {
  add,
  and,
  castTo,
  concat,
  constant,
  type Dim,
  gather,
  gemm,
  greater,
  groupQueryAttention,
  lessOrEqual,
  matMul,
  mul,
  reciprocal,
  reduceMean,
  reduceSum,
  reshape,
  reshapeLike,
  rmsNormalization,
  rotaryEmbedding,
  sigmoid,
  softmax,
  split,
  sqrt,
  squeeze,
  sub,
  tensor,
  transpose,
  unsqueeze,
  type Value,
} from "../onnx/mod.ts";
import { ModelError } from "./errors.ts";
import { cos, lastAlong, prefixLike, sin } from "./extra-ops.ts";
import { loraParamName, loraScaling, loraTargets } from "./lora.ts";
import type { DecoderSpec } from "./parameters.ts";

/** Added to the scores of masked keys: exp() of it is 0 in float32, and it stays finite. */
const MASKED = -1e9;

/** A layer's cached keys (after RoPE) and values, [batch, kvHeads, positions, headDim]. */
export interface KvPair {
  readonly key: Value;
  readonly value: Value;
}

/** What the decoder reads. */
export interface DecoderInputs {
  /** HF parameter name -> graph value (graph inputs or initializers). */
  readonly params: Readonly<Record<string, Value>>;
  /** int32 [batch, seq] (decode: [batch, 1]). */
  readonly tokens: Value;
  /**
   * float32, 1 for real tokens and 0 for padding: [batch, seq] (decode: [batch, past+1], the
   * cached positions then the new token).
   */
  readonly attentionMask: Value;
  /**
   * Decode and append: each layer's cache from the previous run; in append mode its positions
   * are the cache's capacity, the mask marking which hold real tokens.
   */
  readonly past?: readonly KvPair[];
  /**
   * Train step only: LoRA dropout masks by module name (HF, without `.weight`), float32
   * [batch, seq, in] holding 0 or 1 / (1 - p), multiplied into that module's LoRA branch input.
   */
  readonly loraDropoutMasks?: Readonly<Record<string, Value>>;
}

/** What the decoder produces. */
export interface DecoderOutputs {
  /** float32 [batch, seq, vocab] in `full` mode, [batch, vocab] otherwise. */
  readonly logits: Value;
  /**
   * Each layer's keys/values including this run's tokens (prefill and decode); in append mode,
   * this run's token's only, [batch, kvHeads, 1, headDim].
   */
  readonly present: readonly KvPair[];
}

/** Which of the four forms of the decoder to build. */
export type DecoderMode = "full" | "prefill" | "decode" | "append";

/**
 * Builds the decoder on the graph that owns `inputs.tokens`.
 *
 * @example
 * ```ts
 * import { Graph } from "../onnx/mod.ts";
 * import { IO } from "../onnx/train-step/mod.ts";
 * import { decoder } from "./decoder.ts";
 * import { allParams, type DecoderSpec } from "./parameters.ts";
 *
 * declare const spec: DecoderSpec;
 * const g = new Graph("forward");
 * const tokens = g.input("tokens", "int32", ["batch", "seq"]);
 * const attentionMask = g.input("attention_mask", "float32", ["batch", "seq"]);
 * const params = Object.fromEntries(
 *   allParams(spec).map((p) => [p.name, g.input(IO.param(p.name), p.dtype ?? "float32", p.shape)]),
 * );
 * const { logits } = decoder(spec, { params, tokens, attentionMask }, "full");
 * ```
 */
export function decoder(
  spec: DecoderSpec,
  inputs: DecoderInputs,
  mode: DecoderMode,
): DecoderOutputs {
  const c = spec.config;
  const { tokens, attentionMask } = inputs;
  const p = paramReader(inputs.params);
  const linear = linearLayer(spec, inputs.params, inputs.loraDropoutMasks ?? {});
  const [batch, seq] = tokens.shape;
  const decoding = mode === "decode" || mode === "append";
  if (decoding && (seq !== 1 || inputs.past?.length !== c.numLayers)) {
    throw new ModelError(
      "decoder",
      `${mode} takes tokens [batch, 1] and ${c.numLayers} past pairs`,
    );
  }
  const order = decoding ? null : positionOrder(c, tokens);
  const { cosine, sine } = rotaryTables(c, attentionMask, order);
  const maskBias = attentionBias(attentionMask, order);

  const append = mode === "append";
  // One GroupQueryAttention node in the decode step, whose cache it grows. Not in prefill:
  // onnxruntime-node 1.30's WebGPU kernel computes prompts of 32 tokens or more wrongly (2-3% of
  // the logits' scale; the CPU's and onnxruntime-web's are right, docs/PERFORMANCE.md). Not in
  // append mode, whose cache the host keeps, nor in `full`, which the train step differentiates.
  const fusedAttention = spec.fused.includes("attention") && mode === "decode";
  const ctx: AttentionContext = {
    spec,
    batch,
    seq,
    cosine,
    sine,
    maskBias,
    linear,
    p,
    append,
    fusedAttention,
  };
  const eps = c.rmsNormEps;
  const fusedNorm = spec.fused.includes("rms_norm");
  let x = reshape(gather(p("model.embed_tokens.weight"), tokens, 0), [-1, c.hiddenSize]);
  const present: KvPair[] = [];
  for (let i = 0; i < c.numLayers; i++) {
    const at = `model.layers.${i}`;
    const h = rmsNorm(x, p(`${at}.input_layernorm.weight`), eps, fusedNorm);
    const attn = attention(ctx, i, h, inputs.past?.[i]);
    present.push(attn.kv);
    x = add(x, attn.out);
    x = add(
      x,
      mlp(linear, at, rmsNorm(x, p(`${at}.post_attention_layernorm.weight`), eps, fusedNorm)),
    );
  }
  x = rmsNorm(x, p("model.norm.weight"), eps, fusedNorm);
  if (mode === "prefill") x = lastAlong(reshape(x, [batch, seq, c.hiddenSize]), 1);
  const head = c.tieWordEmbeddings ? p("model.embed_tokens.weight") : p("lm_head.weight");
  const logits = gemm(reshape(x, [-1, c.hiddenSize]), head, undefined, { transB: true });
  return {
    logits: mode === "full" ? reshape(logits, [batch, seq, c.vocabSize]) : logits,
    present,
  };
}

/** What one attention block reads besides its layer input. */
interface AttentionContext {
  readonly spec: DecoderSpec;
  readonly batch: Dim;
  readonly seq: Dim;
  readonly cosine: Value;
  readonly sine: Value;
  readonly maskBias: Value;
  readonly linear: (x: Value, module: string) => Value;
  readonly p: (name: string) => Value;
  /** Append mode: the cache is not concatenated with the new keys/values. */
  readonly append: boolean;
  /** Attention, the cache's growth included, as one GroupQueryAttention node. */
  readonly fusedAttention: boolean;
}

/** Grouped-query attention of layer `i` on h [batch*seq, hidden]. */
function attention(
  ctx: AttentionContext,
  i: number,
  h: Value,
  past: KvPair | undefined,
): { out: Value; kv: KvPair } {
  const c = ctx.spec.config;
  const { batch, seq } = ctx;
  const at = `model.layers.${i}.self_attn`;
  const groups = c.numHeads / c.numKvHeads;
  let q = reshape(ctx.linear(h, `${at}.q_proj`), [batch, seq, c.numHeads, c.headDim]);
  let k = reshape(ctx.linear(h, `${at}.k_proj`), [batch, seq, c.numKvHeads, c.headDim]);
  const v = reshape(ctx.linear(h, `${at}.v_proj`), [batch, seq, c.numKvHeads, c.headDim]);
  const fusedNorm = ctx.spec.fused.includes("rms_norm");
  if (c.qkNorm) {
    q = rmsNorm(q, ctx.p(`${at}.q_norm.weight`), c.rmsNormEps, fusedNorm);
    k = rmsNorm(k, ctx.p(`${at}.k_norm.weight`), c.rmsNormEps, fusedNorm);
  }
  const fusedRotary = ctx.spec.fused.includes("rotary_embedding");
  q = rotate(q, ctx.cosine, ctx.sine, fusedRotary);
  k = rotate(k, ctx.cosine, ctx.sine, fusedRotary);
  if (ctx.fusedAttention) {
    const { out, present } = groupQueryAttention(
      reshape(q, [batch, seq, c.numHeads * c.headDim]),
      reshape(k, [batch, seq, c.numKvHeads * c.headDim]),
      reshape(v, [batch, seq, c.numKvHeads * c.headDim]),
      h.graph.cached("attention-bias", () => squeeze(ctx.maskBias, [2])),
      { heads: c.numHeads, kvHeads: c.numKvHeads, scale: 1 / Math.sqrt(c.headDim), past },
    );
    const merged = reshape(out, [-1, c.numHeads * c.headDim]);
    return { out: ctx.linear(merged, `${at}.o_proj`), kv: present };
  }
  // Scaling q by 1/sqrt(headDim) instead of the scores: same product, fewer elements (seq > headDim).
  q = mul(q, 1 / Math.sqrt(c.headDim));
  // Query head h belongs to kv head floor(h / groups), as HF's repeat_interleave arranges it.
  const qh = transpose(reshape(q, [batch, seq, c.numKvHeads, groups, c.headDim]), [0, 2, 3, 1, 4]);
  let kh = transpose(k, [0, 2, 1, 3]);
  let vh = transpose(v, [0, 2, 1, 3]);
  if (past && ctx.append) {
    // One query per row: fold the query heads of a kv head into the rows of one product, [batch,
    // kvHeads, groups, headDim], so each cached key and value is read once per kv head, not once
    // per query head. The cached positions' scores, then the new token's; one softmax over both
    // (the mask's last column is the new token), its weights split back: no copy of the cache.
    const queries = reshape(qh, [batch, c.numKvHeads, groups, c.headDim]);
    const scoresOf = (keys: Value) => matMul(queries, transpose(keys, [0, 1, 3, 2]));
    const bias = squeeze(ctx.maskBias, [3]);
    const scores = add(concat([scoresOf(past.key), scoresOf(kh)], 3), bias);
    const [cached, fresh] = split(softmax(scores, -1), 3, [past.key.shape[2], 1]);
    const heads = add(matMul(cached, past.value), matMul(fresh, vh));
    const merged = reshape(heads, [-1, c.numHeads * c.headDim]);
    return { out: ctx.linear(merged, `${at}.o_proj`), kv: { key: kh, value: vh } };
  }
  if (past) {
    kh = concat([past.key, kh], 2);
    vh = concat([past.value, vh], 2);
  }
  const keysT = transpose(unsqueeze(kh, [2]), [0, 1, 2, 4, 3]);
  const scores = add(matMul(qh, keysT), ctx.maskBias);
  const mixed = matMul(softmax(scores, -1), unsqueeze(vh, [2]));
  const merged = reshape(transpose(mixed, [0, 3, 1, 2, 4]), [-1, c.numHeads * c.headDim]);
  return { out: ctx.linear(merged, `${at}.o_proj`), kv: { key: kh, value: vh } };
}

/** SwiGLU MLP of the layer at `at`: down(silu(gate(h)) * up(h)), silu(g) = g * sigmoid(g). */
function mlp(linear: (x: Value, module: string) => Value, at: string, h: Value): Value {
  const gate = linear(h, `${at}.mlp.gate_proj`);
  const up = linear(h, `${at}.mlp.up_proj`);
  return linear(mul(mul(gate, sigmoid(gate)), up), `${at}.mlp.down_proj`);
}

/** RMSNorm over the last axis: x / sqrt(mean(x^2) + eps) * weight; one node when `fused`. */
function rmsNorm(x: Value, weight: Value, eps: number, fused: boolean): Value {
  if (fused) return rmsNormalization(x, weight, eps);
  const meanSquare = reduceMean(mul(x, x), [-1], true);
  return mul(mul(x, reciprocal(sqrt(add(meanSquare, eps)))), weight);
}

/**
 * RoPE in HF's rotate-half layout on x [batch, seq, heads, headDim], with cos and sin [batch, seq,
 * 1, headDim/2]; one node when `fused` (every token a row of the tables, see rotaryEmbedding).
 */
function rotate(x: Value, cosine: Value, sine: Value, fused: boolean): Value {
  const half = x.shape[3] as number / 2;
  if (fused) {
    const g = x.graph;
    const rows = (table: Value, name: string) =>
      g.cached(`rope-${name}-rows`, () => reshape(table, [-1, half]));
    const heads = x.shape[2] as number;
    const flat = reshape(x, [1, -1, heads * 2 * half]);
    return reshapeLike(rotaryEmbedding(flat, rows(cosine, "cos"), rows(sine, "sin"), heads), x);
  }
  const [x1, x2] = split(x, 3, [half, half]);
  return concat([sub(mul(x1, cosine), mul(x2, sine)), add(mul(x2, cosine), mul(x1, sine))], 3);
}

/**
 * cos and sin of position * inverse frequency, [batch, seq, 1, headDim/2]. A token's position is
 * the count of real tokens before it.
 */
function rotaryTables(
  c: ModelConfig,
  mask: Value,
  order: Value | null,
): { cosine: Value; sine: Value } {
  const g = mask.graph;
  let positions: Value;
  if (order === null) {
    positions = sub(reduceSum(mask, [1], true), 1);
  } else {
    // before[i, j] = 1 when i <= j, so mask @ before counts real tokens up to j.
    const before = castTo(lessOrEqual(unsqueeze(order, [1]), unsqueeze(order, [0])), "float32");
    positions = sub(matMul(mask, before), 1);
  }
  const inv = Float32Array.from(ropeInverseFrequencies(c));
  const invFreq = g.cached(
    `rope-inv-freq`,
    () => constant(g, tensor("float32", [inv.length], inv)),
  );
  const angles = unsqueeze(mul(unsqueeze(positions, [2]), invFreq), [2]);
  return { cosine: cos(angles), sine: sin(angles) };
}

/** 0, 1, ..., seq-1 as float32 [seq], cut from a constant table of max_position_embeddings. */
function positionOrder(c: ModelConfig, tokens: Value): Value {
  const g = tokens.graph;
  const table = g.cached("position-table", () => {
    const n = c.maxPositionEmbeddings;
    return constant(g, tensor("float32", [n], Float32Array.from({ length: n }, (_, i) => i)));
  });
  return prefixLike(table, tokens, 1);
}

/**
 * Additive score bias [batch, 1, 1, queries, keys]: 0 where a query may see a key (the key is a
 * real token and, outside decode, not after the query), MASKED elsewhere. `order` is null in
 * decode, where every cached key precedes the one query.
 */
function attentionBias(mask: Value, order: Value | null): Value {
  const real = greater(mask, 0.5);
  let allowed: Value;
  if (order === null) {
    allowed = unsqueeze(real, [1]);
  } else {
    const causal = lessOrEqual(unsqueeze(order, [0]), unsqueeze(order, [1]));
    allowed = and(causal, unsqueeze(real, [1]));
  }
  return unsqueeze(mul(sub(castTo(allowed, "float32"), 1), -MASKED), [1, 2]);
}

/**
 * Looks parameters up by HF name, failing with the list of what is there. A float16 (frozen base)
 * weight is cast to float32 once per graph, so every product runs in float32.
 */
function paramReader(params: Readonly<Record<string, Value>>): (name: string) => Value {
  return (name) => {
    const v = params[name];
    if (!v) {
      throw new ModelError(
        "params",
        `missing ${name}; the decoder was given ${Object.keys(params).length} params`,
      );
    }
    return v.dtype === "float16"
      ? v.graph.cached(`float32:${name}`, () => castTo(v, "float32"))
      : v;
  };
}

/**
 * x [n, in] -> [n, out] through module `m`: W, optional bias, optional LoRA, whose input is
 * multiplied by the module's dropout mask when there is one (n = batch * seq rows, as the mask's
 * [batch, seq, in] flattens).
 */
function linearLayer(
  spec: DecoderSpec,
  params: Readonly<Record<string, Value>>,
  dropoutMasks: Readonly<Record<string, Value>>,
): (x: Value, module: string) => Value {
  const p = paramReader(params);
  const lora = spec.lora;
  const targets = new Map(
    lora === null ? [] : loraTargets(spec.config, lora).map((t) => [t.module, t.inFeatures]),
  );
  for (const module of Object.keys(dropoutMasks)) {
    if (!targets.has(module)) {
      throw new ModelError(
        "loraDropoutMasks",
        `names ${module}, which is not a LoRA target of this spec; masks go to LoRA targets only`,
      );
    }
  }
  return (x, module) => {
    const bias = params[`${module}.bias`] ? p(`${module}.bias`) : undefined;
    let y = gemm(x, p(`${module}.weight`), bias, { transB: true });
    const inFeatures = targets.get(module);
    if (lora !== null && inFeatures !== undefined) {
      const scale = loraScaling(lora);
      const mask = dropoutMasks[module];
      const branchInput = mask ? mul(x, reshape(mask, [-1, inFeatures])) : x;
      const down = gemm(branchInput, p(loraParamName(module, "A")), undefined, { transB: true });
      y = add(
        y,
        gemm(down, p(loraParamName(module, "B")), undefined, { transB: true, alpha: scale }),
      );
    }
    return y;
  };
}
