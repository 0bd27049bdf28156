/**
 * An independent plain-TypeScript forward pass of the Qwen2/Qwen3/Llama decoder in float64, one
 * sequence at a time, written from the HF modeling code's definitions (not from the graph
 * builder): explicit loops, repeat-interleaved kv heads, rotate-half RoPE at positions 0..n-1,
 * causal softmax attention, SwiGLU. LoRA is applied by merging W + scale * B A first, or unmerged
 * as a branch `scale * B A (mask * x)` when a dropout mask is to act on its input.
 */
import type { LoraAdapter, ModelConfig, NamedTensor } from "../../adapters/hf/mod.ts";

type Weights = ReadonlyMap<string, NamedTensor>;

/** W + scale * B A for every adapted module (a new map; the base is not touched). */
export function mergeLora(base: Weights, adapter: LoraAdapter, scale: number): Weights {
  const out = new Map(base);
  for (const m of adapter.modules.values()) {
    const w = base.get(`${m.module}.weight`)!;
    const [rows, cols] = w.shape;
    const r = m.a.shape[0];
    const data = Float32Array.from(w.data);
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        let s = 0;
        for (let k = 0; k < r; k++) s += m.b.data[i * r + k] * m.a.data[k * cols + j];
        data[i * cols + j] += scale * s;
      }
    }
    out.set(w.name, { ...w, data });
  }
  return out;
}

/** LoRA kept as a branch beside each adapted module, its input optionally masked per position. */
export interface LoraBranch {
  readonly adapter: LoraAdapter;
  readonly scale: number;
  /** The dropout mask [in] of `module` at position `pos` (0, or 1 / (1 - p) where kept). */
  readonly mask: (module: string, pos: number) => ArrayLike<number>;
}

/** y += scale * B (A (mask * x)) for an adapted module; unchanged otherwise. */
function addBranch(
  y: Float64Array,
  branch: LoraBranch | undefined,
  module: string,
  x: Float64Array,
  pos: number,
): Float64Array {
  const m = branch?.adapter.modules.get(module);
  if (!branch || !m) return y;
  const [r, cols] = m.a.shape;
  const mask = branch.mask(module, pos);
  for (let k = 0; k < r; k++) {
    let down = 0;
    for (let j = 0; j < cols; j++) down += m.a.data[k * cols + j] * mask[j] * x[j];
    for (let i = 0; i < y.length; i++) y[i] += branch.scale * m.b.data[i * r + k] * down;
  }
  return y;
}

/** y = W x (+ b) for W [out, in]. */
function linear(weights: Weights, module: string, x: Float64Array): Float64Array {
  const w = weights.get(`${module}.weight`)!;
  const b = weights.get(`${module}.bias`);
  const [rows, cols] = w.shape;
  const y = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    let s = b ? b.data[i] : 0;
    for (let j = 0; j < cols; j++) s += w.data[i * cols + j] * x[j];
    y[i] = s;
  }
  return y;
}

function rmsNorm(x: Float64Array, w: ArrayLike<number>, eps: number): Float64Array {
  let ss = 0;
  for (const v of x) ss += v * v;
  const inv = 1 / Math.sqrt(ss / x.length + eps);
  return x.map((v, i) => v * inv * w[i]);
}

function rope(x: Float64Array, pos: number, c: ModelConfig): Float64Array {
  const out = new Float64Array(x.length);
  const half = c.headDim / 2;
  for (let h = 0; h < x.length / c.headDim; h++) {
    const o = h * c.headDim;
    for (let i = 0; i < half; i++) {
      const angle = pos / Math.pow(c.ropeTheta, (2 * i) / c.headDim);
      const a = x[o + i];
      const b = x[o + half + i];
      out[o + i] = a * Math.cos(angle) - b * Math.sin(angle);
      out[o + half + i] = b * Math.cos(angle) + a * Math.sin(angle);
    }
  }
  return out;
}

function headNorm(x: Float64Array, w: ArrayLike<number>, c: ModelConfig): Float64Array {
  const out = new Float64Array(x.length);
  for (let h = 0; h < x.length / c.headDim; h++) {
    const part = x.subarray(h * c.headDim, (h + 1) * c.headDim);
    out.set(rmsNorm(part, w, c.rmsNormEps), h * c.headDim);
  }
  return out;
}

/**
 * Logits [n][vocab] of one unpadded sequence; `branch` adds an unmerged LoRA (leave the adapter
 * out of `weights` then).
 *
 * @example
 * ```ts
 * import { loadEmbeddedModel } from "../../adapters/model/mod.ts";
 * import { referenceLogits } from "./reference.ts";
 *
 * const model = await loadEmbeddedModel();
 * referenceLogits(model.config, model.tensors, [1, 2, 3])[2][0]; // position 2's logit of token 0
 * ```
 */
export function referenceLogits(
  c: ModelConfig,
  weights: Weights,
  tokens: readonly number[],
  branch?: LoraBranch,
): Float64Array[] {
  const get = (name: string) => weights.get(name)!.data;
  const project = (module: string, x: Float64Array, pos: number) =>
    addBranch(linear(weights, module, x), branch, module, x, pos);
  const d = c.hiddenSize;
  const embed = get("model.embed_tokens.weight");
  let xs = tokens.map((t) => Float64Array.from(embed.subarray(t * d, (t + 1) * d)));
  for (let l = 0; l < c.numLayers; l++) {
    const at = `model.layers.${l}`;
    const hs = xs.map((x) => rmsNorm(x, get(`${at}.input_layernorm.weight`), c.rmsNormEps));
    const qs: Float64Array[] = [];
    const ks: Float64Array[] = [];
    const vs: Float64Array[] = [];
    hs.forEach((h, pos) => {
      let q = project(`${at}.self_attn.q_proj`, h, pos);
      let k = project(`${at}.self_attn.k_proj`, h, pos);
      if (c.qkNorm) {
        q = headNorm(q, get(`${at}.self_attn.q_norm.weight`), c);
        k = headNorm(k, get(`${at}.self_attn.k_norm.weight`), c);
      }
      qs.push(rope(q, pos, c));
      ks.push(rope(k, pos, c));
      vs.push(project(`${at}.self_attn.v_proj`, h, pos));
    });
    const groups = c.numHeads / c.numKvHeads;
    xs = xs.map((x, t) => {
      const merged = new Float64Array(c.numHeads * c.headDim);
      for (let h = 0; h < c.numHeads; h++) {
        const kv = Math.floor(h / groups);
        const scores = new Float64Array(t + 1);
        for (let s = 0; s <= t; s++) {
          let dot = 0;
          for (let i = 0; i < c.headDim; i++) {
            dot += qs[t][h * c.headDim + i] * ks[s][kv * c.headDim + i];
          }
          scores[s] = dot / Math.sqrt(c.headDim);
        }
        const max = Math.max(...scores);
        const e = scores.map((v) => Math.exp(v - max));
        const sum = e.reduce((a, b) => a + b, 0);
        for (let s = 0; s <= t; s++) {
          for (let i = 0; i < c.headDim; i++) {
            merged[h * c.headDim + i] += (e[s] / sum) * vs[s][kv * c.headDim + i];
          }
        }
      }
      const attn = project(`${at}.self_attn.o_proj`, merged, t);
      const y = x.map((v, i) => v + attn[i]);
      const h2 = rmsNorm(y, get(`${at}.post_attention_layernorm.weight`), c.rmsNormEps);
      const gate = project(`${at}.mlp.gate_proj`, h2, t);
      const up = project(`${at}.mlp.up_proj`, h2, t);
      const act = gate.map((g, i) => (g / (1 + Math.exp(-g))) * up[i]);
      const down = project(`${at}.mlp.down_proj`, act, t);
      return y.map((v, i) => v + down[i]);
    });
  }
  const head = c.tieWordEmbeddings ? "model.embed_tokens" : "lm_head";
  return xs.map((x) => {
    const h = rmsNorm(x, get("model.norm.weight"), c.rmsNormEps);
    const w = get(`${head}.weight`);
    const out = new Float64Array(c.vocabSize);
    for (let v = 0; v < c.vocabSize; v++) {
      let s = 0;
      for (let i = 0; i < d; i++) s += w[v * d + i] * h[i];
      out[v] = s;
    }
    return out;
  });
}

/** log softmax of one logit row, float64. */
export function logSoftmax64(row: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) max = Math.max(max, row[i]);
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += Math.exp(row[i] - max);
  const lse = max + Math.log(sum);
  return Float64Array.from(row, (v) => v - lse);
}
