/**
 * Grouped-query attention in one node, onnxruntime's `GroupQueryAttention` (com.microsoft, with
 * kernels on its CPU, WebAssembly and WebGPU providers): scores of every query head against its kv
 * head's keys (query head h reads kv head floor(h / (heads / kvHeads))), the causal mask, an
 * additive bias, softmax, the weighted values, and the keys and values of this run appended to the
 * cache, where the composed form takes some fifteen nodes and two copies of the cache.
 *
 * How it is called here: every row's cache is full (seqlens_k = total - 1 for every row, so the
 * new keys and values land after the past ones, as a concatenation would put them), and padding is
 * masked by the bias, not by per-row lengths, so left-padded batches work as in the composed form.
 * Rotary embedding is applied by the caller (do_rotary off): the cache holds rotated keys.
 *
 * No gradient: the op serves generation's decode step. A backward would have to recompute
 * the attention weights with the composed nodes, more than the composed form itself.
 *
 * Known wrong: onnxruntime-node 1.30's WebGPU kernel, on a run of 32 tokens or more without a
 * past (a prompt), is off by 2-3% of the logits' scale; its CPU kernel and onnxruntime-web's
 * WebGPU one are right (docs/PERFORMANCE.md, "Fused attention"). Decode is right on all four.
 */
import { attr, type Value } from "../ir.ts";
import { sub } from "./binary.ts";
import { castTo, defineOp, expectFloat, fail, graphOf } from "./common.ts";
import { dimTensor, expand, reshape } from "./shape.ts";

const OP = "GroupQueryAttention";

/** The op's kernels (every provider) take head sizes that are multiples of this. */
export const GQA_HEAD_SIZE_MULTIPLE = 8;

const GROUP_QUERY_ATTENTION = Object.freeze({
  ...defineOp(OP, (inputs, attrs) => {
    const [query, key, value, pastKey, pastValue, , , , , , bias] = inputs;
    if (!query || !key || !value || !bias) fail(OP, "needs query, key, value and a bias", inputs);
    expectFloat(OP, query, inputs);
    const heads = attrs.num_heads?.value as number;
    const kvHeads = attrs.kv_num_heads?.value as number;
    const [batch, seq, hidden] = query.shape;
    if (query.shape.length !== 3 || typeof hidden !== "number" || hidden % heads !== 0) {
      fail(OP, `query must be [batch, seq, ${heads} x headDim]`, inputs);
    }
    const headDim = hidden / heads;
    if (headDim % GQA_HEAD_SIZE_MULTIPLE !== 0) {
      fail(OP, `head size ${headDim} is not a multiple of ${GQA_HEAD_SIZE_MULTIPLE}`, inputs);
    }
    for (const kv of [key, value]) {
      if (kv.shape.length !== 3 || kv.shape[2] !== kvHeads * headDim || kv.dtype !== query.dtype) {
        fail(
          OP,
          `key and value must be [batch, seq, ${kvHeads * headDim}] of query's dtype`,
          inputs,
        );
      }
    }
    if ((pastKey === undefined) !== (pastValue === undefined)) {
      fail(OP, "takes both past key and past value or neither", inputs);
    }
    const total = bias.shape[3];
    if (bias.shape.length !== 4 || bias.shape[2] !== seq || bias.dtype !== query.dtype) {
      fail(OP, "the bias must be [batch, 1, seq, total] of query's dtype", inputs);
    }
    const present = { dtype: query.dtype, shape: [batch, kvHeads, total, headDim] };
    return [{ dtype: query.dtype, shape: query.shape }, present, present];
  }),
  domain: "com.microsoft",
});

/**
 * Attention of q [batch, seq, heads x headDim] over the cached keys and values (if any) and this
 * run's k, v [batch, seq, kvHeads x headDim], scores scaled by `scale` plus `bias` [batch, 1, seq,
 * total] (total = cached + seq), causal within the run. Returns the output [batch, seq, heads x
 * headDim] and the grown cache [batch, kvHeads, total, headDim].
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { groupQueryAttention } from "./attention.ts";
 *
 * declare const q: Value, k: Value, v: Value; // [batch, seq, 14 x 64], [batch, seq, 2 x 64]
 * declare const bias: Value; // [batch, 1, seq, seq]: 0 where a key is visible, -1e9 elsewhere
 * const { out, present } = groupQueryAttention(q, k, v, bias, { heads: 14, kvHeads: 2, scale: 1 / 8 });
 * ```
 */
export function groupQueryAttention(
  q: Value,
  k: Value,
  v: Value,
  bias: Value,
  options: {
    readonly heads: number;
    readonly kvHeads: number;
    readonly scale: number;
    /** The cache so far, keys and values [batch, kvHeads, positions, headDim]. */
    readonly past?: { readonly key: Value; readonly value: Value };
  },
): { out: Value; present: { key: Value; value: Value } } {
  const g = graphOf(OP, [q]);
  // Every row's cache full: total (a scalar the kernel reads on the host) and total - 1 per row,
  // built once per graph.
  const [batch, totalDim] = [q.shape[0], bias.shape[3]];
  const total = g.cached(
    `gqa-total:${totalDim}`,
    () => castTo(reshape(dimTensor(g, totalDim), []), "int32"),
  );
  const seqlensK = g.cached(
    `gqa-seqlens:${batch}:${totalDim}`,
    () => expand(sub(total, 1), [batch]),
  );
  const { past } = options;
  const [out, key, value] = g.addNode(
    GROUP_QUERY_ATTENTION,
    [q, k, v, past?.key, past?.value, seqlensK, total, undefined, undefined, undefined, bias],
    {
      num_heads: attr.int(options.heads),
      kv_num_heads: attr.int(options.kvHeads),
      scale: attr.float(options.scale),
    },
  );
  return { out, present: { key, value } };
}
