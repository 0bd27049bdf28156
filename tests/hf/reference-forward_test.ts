import assert from "node:assert/strict";
import { loadHfModel } from "../../adapters/hf/load-model.ts";
import { parseModelConfig } from "../../adapters/hf/model-config.ts";
import { type NamedTensor, namedTensor } from "../../adapters/hf/tensor.ts";
import { headwise, referenceForward } from "./reference-forward.ts";
import { writeTinyCheckpoint } from "./tiny-checkpoint.ts";

// A 1-layer Qwen2 model small enough to follow by hand: hidden 2, one head of dim 2, MLP width 1.
const HAND_CONFIG = parseModelConfig({
  architectures: ["Qwen2ForCausalLM"],
  vocab_size: 2,
  hidden_size: 2,
  intermediate_size: 1,
  num_hidden_layers: 1,
  num_attention_heads: 1,
  num_key_value_heads: 1,
  rms_norm_eps: 1e-12,
  rope_theta: 10000,
  max_position_embeddings: 8,
});
const I2 = [1, 0, 0, 1];
const HAND_WEIGHTS: [string, number[], number[]][] = [
  ["model.embed_tokens.weight", [2, 2], [1, 1, 2, 0]], // token 0 = [1, 1], token 1 = [2, 0]
  ["model.layers.0.input_layernorm.weight", [2], [1, 1]],
  ["model.layers.0.self_attn.q_proj.weight", [2, 2], I2],
  ["model.layers.0.self_attn.q_proj.bias", [2], [0, 0]],
  ["model.layers.0.self_attn.k_proj.weight", [2, 2], I2],
  ["model.layers.0.self_attn.k_proj.bias", [2], [0, 0]],
  ["model.layers.0.self_attn.v_proj.weight", [2, 2], I2],
  ["model.layers.0.self_attn.v_proj.bias", [2], [0.5, 0]],
  ["model.layers.0.self_attn.o_proj.weight", [2, 2], I2],
  ["model.layers.0.post_attention_layernorm.weight", [2], [1, 1]],
  ["model.layers.0.mlp.gate_proj.weight", [1, 2], [1, 0]], // gate reads dim 0
  ["model.layers.0.mlp.up_proj.weight", [1, 2], [0, 1]], // up reads dim 1
  ["model.layers.0.mlp.down_proj.weight", [2, 1], [1, 0]], // writes dim 0
  ["model.norm.weight", [2], [1, 1]],
  ["lm_head.weight", [2, 2], I2],
];
const handTensors = new Map<string, NamedTensor>(
  HAND_WEIGHTS.map(([n, s, d]) => [n, namedTensor(n, s, new Float32Array(d))]),
);

/** Hand-derived tail after attention: residual, RMSNorm, silu(gate)*up into dim 0, final norm. */
function tail(x: [number, number]): number[] {
  const rms = (v: number[]) => Math.sqrt((v[0] ** 2 + v[1] ** 2) / 2);
  const r = rms(x);
  const [g, u] = [x[0] / r, x[1] / r];
  const y = [x[0] + (g / (1 + Math.exp(-g))) * u, x[1]];
  return [y[0] / rms(y), y[1] / rms(y)];
}

const near = (got: ArrayLike<number>, want: number[]) =>
  want.forEach((w, i) => assert.ok(Math.abs(got[i] - w) < 1e-9, `[${i}] ${got[i]} vs ${w}`));

Deno.test("reference forward, one token: attention output is v, RoPE at 0 is identity", () => {
  // x = [1, 1] (rms 1, unchanged by the norm); v = x + [0.5, 0]; residual -> [2.5, 2].
  const [logits] = referenceForward(HAND_CONFIG, handTensors, [0]);
  near(logits, tail([2.5, 2]));
});

Deno.test("reference forward, two tokens: rotated query/key scores and causal softmax", () => {
  // Position 0: token 1 -> x = [2, 0], normed h0 = [sqrt2, 0]; k0 = h0 (angle 0).
  // Position 1: token 0 -> h1 = [1, 1]; head_dim 2 so the only frequency is 1 and the angle is 1 rad:
  // q1 = k1 = [cos1 - sin1, cos1 + sin1]. Scores / sqrt(2): s0 = cos1 - sin1, s1 = |q1|^2/sqrt2 = sqrt2.
  const s0 = Math.cos(1) - Math.sin(1);
  const s1 = Math.SQRT2;
  const p0 = Math.exp(s0) / (Math.exp(s0) + Math.exp(s1));
  const v0 = [Math.SQRT2 + 0.5, 0];
  const v1 = [1.5, 1];
  const attn = [p0 * v0[0] + (1 - p0) * v1[0], p0 * v0[1] + (1 - p0) * v1[1]];
  const logits = referenceForward(HAND_CONFIG, handTensors, [1, 0]);
  near(logits[1], tail([1 + attn[0], 1 + attn[1]]));
  // Causality: position 0 sees only itself, so it matches a one-token run of token 1.
  near(logits[0], [...referenceForward(HAND_CONFIG, handTensors, [1])[0]]);
  near(logits[0], tail([2 + v0[0], 0]));
});

Deno.test("RoPE pairs dimension i with i + d/2 (HF rotate-half), frequencies theta^(-2i/d)", () => {
  const c = parseModelConfig({ ...HAND_CONFIG.raw, hidden_size: 4, head_dim: 4, rope_theta: 100 });
  // d = 4, theta = 100: frequencies [1, 0.1]. Position 3: angles [3, 0.3].
  near(headwise(Float64Array.of(1, 0, 0, 0), c, 3, null), [Math.cos(3), 0, Math.sin(3), 0]);
  near(headwise(Float64Array.of(0, 0, 0, 1), c, 3, null), [0, -Math.sin(0.3), 0, Math.cos(0.3)]);
});

Deno.test("grouped-query attention equals the same model with k/v heads repeated", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-ref-" });
  await writeTinyCheckpoint(dir, { dtype: "F32" });
  const model = await loadHfModel(dir, { tokenizer: false });
  // 4 query heads share 2 kv heads (head h reads kv head floor(h / 2)); repeating kv rows gives a
  // 4-kv-head model whose head h reads kv head h: the logits must not change.
  const c = model.config;
  const repeated = parseModelConfig({ ...c.raw, num_key_value_heads: c.numHeads });
  const tensors = new Map(model.tensors);
  for (let l = 0; l < c.numLayers; l++) {
    for (const proj of ["k_proj", "v_proj"]) {
      for (const suffix of ["weight", "bias"]) {
        const name = `model.layers.${l}.self_attn.${proj}.${suffix}`;
        const t = tensors.get(name)!;
        const rowWidth = suffix === "weight" ? c.hiddenSize : 1;
        const block = c.headDim * rowWidth;
        const data = new Float32Array(c.numHeads * block);
        for (let h = 0; h < c.numHeads; h++) {
          const kv = Math.floor(h / (c.numHeads / c.numKvHeads));
          data.set(t.data.subarray(kv * block, (kv + 1) * block), h * block);
        }
        const shape = suffix === "weight"
          ? [c.numHeads * c.headDim, c.hiddenSize]
          : [c.numHeads * c.headDim];
        tensors.set(name, namedTensor(name, shape, data));
      }
    }
  }
  const tokens = [5, 100, 7, 261, 42];
  const a = referenceForward(c, model.tensors, tokens);
  const b = referenceForward(repeated, tensors, tokens);
  a.forEach((row, t) => near(row, [...b[t]]));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the reference runs on loaded Qwen2, Qwen3 and Llama fixtures and is causal", async () => {
  for (
    const architecture of ["Qwen2ForCausalLM", "Qwen3ForCausalLM", "LlamaForCausalLM"] as const
  ) {
    const dir = await Deno.makeTempDir({ prefix: "polyrl-ref-" });
    await writeTinyCheckpoint(dir, { architecture });
    const model = await loadHfModel(dir);
    const tokens = model.tokenizer!.encode("<|im_start|>user\n12+30=<|im_end|>");
    const full = referenceForward(model.config, model.tensors, tokens);
    assert.equal(full.length, tokens.length);
    assert.ok(
      full.every((row) => row.length === model.config.vocabSize && row.every(Number.isFinite)),
    );
    const prefix = referenceForward(model.config, model.tensors, tokens.slice(0, 3));
    prefix.forEach((row, t) => near(row, [...full[t]]));
    assert.ok(
      full[3].some((v, i) => Math.abs(v - full[2][i]) > 1e-6),
      `${architecture}: rows differ`,
    );
    await Deno.remove(dir, { recursive: true });
  }
});
