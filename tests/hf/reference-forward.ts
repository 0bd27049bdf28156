/**
 * An independent reference forward pass for the Qwen2/Qwen3/Llama decoder, written for tests: plain
 * TypeScript loops in float64 over the tensors `loadHfModel` returns, following the HF modeling code's
 * conventions (RMSNorm `x / sqrt(mean(x^2) + eps) * w`, rotate-half RoPE with the same angle for
 * dimensions i and i + d/2, grouped-query attention with query head h reading kv head
 * floor(h / (heads / kvHeads)), causal softmax scaled by 1/sqrt(head_dim), SwiGLU MLP, Qwen3's
 * per-head q/k RMSNorm before RoPE). It shares no code with the graph builder, so the builder's
 * logits can be checked against it. Only unscaled RoPE is implemented (the fixtures use none).
 */
import type { ModelConfig } from "../../adapters/hf/model-config.ts";
import type { NamedTensor } from "../../adapters/hf/tensor.ts";

/**
 * Logits for every position of `tokens` ([T][vocab]).
 *
 * @example
 * ```ts
 * import { referenceForward } from "./reference-forward.ts";
 * import { writeTinyCheckpoint } from "./tiny-checkpoint.ts";
 *
 * const model = await writeTinyCheckpoint(await Deno.makeTempDir());
 * const logits = referenceForward(model.config, model.tensors, [1, 2, 3]); // [3][272]
 * ```
 */
export function referenceForward(
  c: ModelConfig,
  tensors: ReadonlyMap<string, NamedTensor>,
  tokens: readonly number[],
): Float64Array[] {
  if (c.ropeScaling !== null) throw new Error("reference forward implements unscaled RoPE only");
  const w = (name: string): Float32Array => {
    const t = tensors.get(name);
    if (t === undefined) throw new Error(`reference forward: tensor ${name} not loaded`);
    return t.data;
  };
  const maybe = (name: string) => tensors.get(name)?.data ?? null;
  const embed = w("model.embed_tokens.weight");
  let x: Float64Array[] = tokens.map((id) =>
    Float64Array.from(embed.subarray(id * c.hiddenSize, (id + 1) * c.hiddenSize))
  );
  for (let l = 0; l < c.numLayers; l++) {
    const p = `model.layers.${l}`;
    const h = x.map((row) => rmsNorm(row, w(`${p}.input_layernorm.weight`), c.rmsNormEps));
    const proj = (name: string, inp: Float64Array) =>
      linear(inp, w(`${p}.${name}.weight`), maybe(`${p}.${name}.bias`));
    const q = h.map((row, t) =>
      headwise(proj("self_attn.q_proj", row), c, t, maybe(`${p}.self_attn.q_norm.weight`))
    );
    const k = h.map((row, t) =>
      headwise(proj("self_attn.k_proj", row), c, t, maybe(`${p}.self_attn.k_norm.weight`))
    );
    const v = h.map((row) => proj("self_attn.v_proj", row));
    const attended = q.map((_, t) => attention(q, k, v, t, c));
    x = x.map((row, t) => add(row, proj("self_attn.o_proj", attended[t])));
    const h2 = x.map((row) =>
      rmsNorm(row, w(`${p}.post_attention_layernorm.weight`), c.rmsNormEps)
    );
    x = x.map((row, t) => {
      const gate = proj("mlp.gate_proj", h2[t]);
      const up = proj("mlp.up_proj", h2[t]);
      const act = gate.map((g, i) => (g / (1 + Math.exp(-g))) * up[i]);
      return add(row, proj("mlp.down_proj", act));
    });
  }
  const head = maybe("lm_head.weight") ?? embed;
  return x.map((row) => linear(rmsNorm(row, w("model.norm.weight"), c.rmsNormEps), head, null));
}

/** `W x + b` with W stored [out, in] row-major, as HF Linear layers store it. */
function linear(x: Float64Array, weight: Float32Array, bias: Float32Array | null): Float64Array {
  const out = new Float64Array(weight.length / x.length);
  for (let o = 0; o < out.length; o++) {
    let s = bias === null ? 0 : bias[o];
    for (let i = 0; i < x.length; i++) s += weight[o * x.length + i] * x[i];
    out[o] = s;
  }
  return out;
}

function rmsNorm(x: Float64Array, weight: Float32Array, eps: number): Float64Array {
  let ms = 0;
  for (const v of x) ms += v * v;
  const scale = 1 / Math.sqrt(ms / x.length + eps);
  return x.map((v, i) => v * scale * weight[i]);
}

function add(a: Float64Array, b: Float64Array): Float64Array {
  return a.map((v, i) => v + b[i]);
}

/**
 * Per head: optional RMSNorm over head_dim, then rotate-half RoPE at `position` (dimension i turns
 * with i + d/2, not with its neighbour).
 *
 * @example
 * ```ts
 * import { parseModelConfig } from "../../adapters/hf/model-config.ts";
 * import { headwise } from "./reference-forward.ts";
 * import { tinyConfigJson } from "./tiny-checkpoint.ts";
 *
 * const config = parseModelConfig(tinyConfigJson("Qwen2ForCausalLM")); // head_dim 4
 * headwise(Float64Array.of(1, 0, 0, 0), config, 1, null); // [cos 1, 0, sin 1, 0]
 * ```
 */
export function headwise(
  x: Float64Array,
  c: ModelConfig,
  position: number,
  norm: Float32Array | null,
): Float64Array {
  const d = c.headDim;
  const out = new Float64Array(x.length);
  for (let h = 0; h < x.length / d; h++) {
    let head = x.subarray(h * d, (h + 1) * d);
    if (norm !== null) head = rmsNorm(head, norm, c.rmsNormEps);
    for (let i = 0; i < d / 2; i++) {
      const angle = position * Math.pow(c.ropeTheta, -(2 * i) / d);
      const [cos, sin] = [Math.cos(angle), Math.sin(angle)];
      out[h * d + i] = head[i] * cos - head[i + d / 2] * sin;
      out[h * d + i + d / 2] = head[i + d / 2] * cos + head[i] * sin;
    }
  }
  return out;
}

/** Causal attention output of position `t`, all heads concatenated. */
function attention(
  q: Float64Array[],
  k: Float64Array[],
  v: Float64Array[],
  t: number,
  c: ModelConfig,
): Float64Array {
  const d = c.headDim;
  const group = c.numHeads / c.numKvHeads;
  const out = new Float64Array(c.numHeads * d);
  for (let h = 0; h < c.numHeads; h++) {
    const kvh = Math.floor(h / group);
    const scores = new Float64Array(t + 1);
    for (let s = 0; s <= t; s++) {
      let dot = 0;
      for (let i = 0; i < d; i++) dot += q[t][h * d + i] * k[s][kvh * d + i];
      scores[s] = dot / Math.sqrt(d);
    }
    const max = Math.max(...scores);
    const exp = scores.map((s) => Math.exp(s - max));
    const total = exp.reduce((a, b) => a + b, 0);
    for (let s = 0; s <= t; s++) {
      for (let i = 0; i < d; i++) out[h * d + i] += (exp[s] / total) * v[s][kvh * d + i];
    }
  }
  return out;
}
