import assert from "node:assert/strict";
import {
  HfError,
  type HfErrorCode,
  UnsupportedArchitectureError,
} from "../../adapters/hf/errors.ts";
import { checkTensorShapes, expectedTensors } from "../../adapters/hf/expected-tensors.ts";
import { modelConfigToJson, parseModelConfig } from "../../adapters/hf/model-config.ts";

// Hyperparameters as published in the config.json of each model (values typed in for the test).
const QWEN25_05B = {
  architectures: ["Qwen2ForCausalLM"],
  model_type: "qwen2",
  hidden_size: 896,
  intermediate_size: 4864,
  num_hidden_layers: 24,
  num_attention_heads: 14,
  num_key_value_heads: 2,
  hidden_act: "silu",
  max_position_embeddings: 32768,
  max_window_layers: 21,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000.0,
  sliding_window: 32768,
  use_sliding_window: false,
  tie_word_embeddings: true,
  torch_dtype: "bfloat16",
  vocab_size: 151936,
  bos_token_id: 151643,
  eos_token_id: 151645,
};
const QWEN3_06B = {
  architectures: ["Qwen3ForCausalLM"],
  model_type: "qwen3",
  attention_bias: false,
  head_dim: 128,
  hidden_size: 1024,
  intermediate_size: 3072,
  num_hidden_layers: 28,
  num_attention_heads: 16,
  num_key_value_heads: 8,
  hidden_act: "silu",
  max_position_embeddings: 40960,
  rms_norm_eps: 1e-6,
  rope_scaling: null,
  rope_theta: 1000000,
  tie_word_embeddings: true,
  vocab_size: 151936,
  bos_token_id: 151643,
  eos_token_id: 151645,
};
const LLAMA32_1B = {
  architectures: ["LlamaForCausalLM"],
  model_type: "llama",
  attention_bias: false,
  head_dim: 64,
  hidden_size: 2048,
  intermediate_size: 8192,
  num_hidden_layers: 16,
  num_attention_heads: 32,
  num_key_value_heads: 8,
  hidden_act: "silu",
  max_position_embeddings: 131072,
  mlp_bias: false,
  rms_norm_eps: 1e-5,
  rope_scaling: {
    factor: 32.0,
    high_freq_factor: 4.0,
    low_freq_factor: 1.0,
    original_max_position_embeddings: 8192,
    rope_type: "llama3",
  },
  rope_theta: 500000.0,
  tie_word_embeddings: true,
  vocab_size: 128256,
  bos_token_id: 128000,
  eos_token_id: [128001, 128008, 128009],
};

const shapeOf = (c: ReturnType<typeof parseModelConfig>, name: string) =>
  expectedTensors(c).find((t) => t.name === name)?.shape;

Deno.test("Qwen2.5-0.5B: head_dim derived, q/k/v bias, no o bias, tied head", () => {
  const c = parseModelConfig(QWEN25_05B);
  assert.equal(c.headDim, 64);
  assert.deepEqual(
    [c.qkvBias, c.oBias, c.qkNorm, c.tieWordEmbeddings, c.numKvHeads],
    [true, false, false, true, 2],
  );
  assert.deepEqual([c.ropeTheta, c.ropeScaling, c.eosTokenIds], [1e6, null, [151645]]);
  assert.deepEqual(shapeOf(c, "model.layers.0.self_attn.k_proj.bias"), [128]);
  assert.deepEqual(shapeOf(c, "model.layers.23.self_attn.o_proj.weight"), [896, 896]);
  assert.equal(shapeOf(c, "model.layers.0.self_attn.o_proj.bias"), undefined);
  // embed + 24 layers x (2 norms + q,k,v weight+bias + o + gate,up,down) + final norm; lm_head tied
  const required = expectedTensors(c).filter((t) => !t.optional);
  assert.equal(required.length, 1 + 24 * 12 + 1);
});

Deno.test("Qwen3-0.6B: explicit head_dim 128 differs from hidden/heads; qk-norm; no bias", () => {
  const c = parseModelConfig(QWEN3_06B);
  assert.deepEqual([c.headDim, c.qkvBias, c.oBias, c.qkNorm], [128, false, false, true]);
  assert.deepEqual(shapeOf(c, "model.layers.0.self_attn.q_proj.weight"), [2048, 1024]);
  assert.deepEqual(shapeOf(c, "model.layers.0.self_attn.k_proj.weight"), [1024, 1024]);
  assert.deepEqual(shapeOf(c, "model.layers.0.self_attn.o_proj.weight"), [1024, 2048]);
  assert.deepEqual(shapeOf(c, "model.layers.0.self_attn.q_norm.weight"), [128]);
  assert.deepEqual(shapeOf(c, "model.layers.27.self_attn.k_norm.weight"), [128]);
});

Deno.test("Llama-3.2-1B: llama3 rope scaling recorded, eos list kept", () => {
  const c = parseModelConfig(LLAMA32_1B);
  assert.deepEqual(c.ropeScaling, {
    type: "llama3",
    factor: 32,
    lowFreqFactor: 1,
    highFreqFactor: 4,
    originalMaxPositionEmbeddings: 8192,
  });
  assert.deepEqual(c.eosTokenIds, [128001, 128008, 128009]);
  assert.deepEqual([c.rmsNormEps, c.ropeTheta, c.mlpBias, c.qkvBias], [1e-5, 500000, false, false]);
});

Deno.test("rope settings are read from transformers 5 rope_parameters too", () => {
  const c = parseModelConfig({
    ...QWEN3_06B,
    rope_theta: undefined,
    rope_parameters: { rope_theta: 1234, rope_type: "linear", factor: 2 },
  });
  assert.deepEqual([c.ropeTheta, c.ropeScaling], [1234, { type: "linear", factor: 2 }]);
});

Deno.test("toJson then parse is the identity on every parsed field", () => {
  for (const json of [QWEN25_05B, QWEN3_06B, LLAMA32_1B]) {
    const c = parseModelConfig(json);
    const again = parseModelConfig(JSON.parse(JSON.stringify(modelConfigToJson(c))));
    assert.deepEqual({ ...again, raw: null }, { ...c, raw: null });
  }
});

Deno.test("an unsupported architecture lists the supported ones", () => {
  assert.throws(
    () => parseModelConfig({ ...QWEN25_05B, architectures: ["MistralForCausalLM"] }),
    (e: Error) => {
      assert.ok(e instanceof UnsupportedArchitectureError);
      assert.equal(
        e.message,
        "unsupported architecture MistralForCausalLM; supported: " +
          "Qwen2ForCausalLM, Qwen3ForCausalLM, LlamaForCausalLM",
      );
      return true;
    },
  );
});

Deno.test("invalid and unsupported fields are named with their values", () => {
  const cases: [Record<string, unknown>, HfErrorCode, RegExp][] = [
    [
      { hidden_size: undefined },
      "invalid-config",
      /field hidden_size must be an integer >= 1, got undefined/,
    ],
    [
      { num_key_value_heads: 3 },
      "invalid-config",
      /num_key_value_heads = 3 must divide num_attention_heads = 14/,
    ],
    [
      { rms_norm_eps: "small" },
      "invalid-config",
      /rms_norm_eps must be a positive number, got "small"/,
    ],
    [
      { tie_word_embeddings: "yes" },
      "invalid-config",
      /tie_word_embeddings must be true or false/,
    ],
    [
      { num_attention_heads: 15, num_key_value_heads: 15 },
      "invalid-config",
      /hidden_size 896 is not divisible by num_attention_heads 15/,
    ],
    [{ architectures: [] }, "invalid-config", /architectures must be a list/],
    [{ hidden_act: "gelu" }, "unsupported-config", /hidden_act = "gelu" is not supported/],
    [{ use_sliding_window: true }, "unsupported-config", /sliding-window attention is not built/],
    [
      { layer_types: ["full_attention", "sliding_attention"] },
      "unsupported-config",
      /layer_types = \["full_attention","sliding_attention"\] is not supported/,
    ],
    [
      { rope_scaling: { rope_type: "longrope", factor: 2 } },
      "unsupported-config",
      /rope_type = "longrope" is not supported: known types are/,
    ],
    [
      { rope_scaling: { rope_type: "llama3", factor: 8 } },
      "invalid-config",
      /rope_scaling: field low_freq_factor must be a positive number/,
    ],
  ];
  for (const [patch, code, pattern] of cases) {
    assert.throws(() => parseModelConfig({ ...QWEN25_05B, ...patch }), (e: Error) => {
      assert.ok(e instanceof HfError && e.code === code, `${pattern}: got ${e}`);
      assert.match(e.message, pattern);
      return true;
    });
  }
});

Deno.test("checkTensorShapes names the offending tensor", () => {
  const c = parseModelConfig({ ...QWEN25_05B, num_hidden_layers: 1 });
  const shapes = new Map(expectedTensors(c).map((t) => [t.name, t.shape]));
  shapes.set("model.layers.0.self_attn.rotary_emb.inv_freq", [32]);
  assert.deepEqual(checkTensorShapes(c, shapes, "ckpt").ignored, [
    "model.layers.0.self_attn.rotary_emb.inv_freq",
  ]);
  const bad = new Map(shapes).set("model.layers.0.mlp.up_proj.weight", [4864, 895]);
  assert.throws(
    () => checkTensorShapes(c, bad, "ckpt"),
    /tensor model\.layers\.0\.mlp\.up_proj\.weight has shape \[4864, 895\] but \[4864, 896\] is expected/,
  );
  const missing = new Map(shapes);
  missing.delete("model.norm.weight");
  assert.throws(
    () => checkTensorShapes(c, missing, "ckpt"),
    /tensor model\.norm\.weight is missing from ckpt/,
  );
  const extra = new Map(shapes).set("model.layers.0.extra.weight", [1]);
  assert.throws(
    () => checkTensorShapes(c, extra, "ckpt"),
    /tensor model\.layers\.0\.extra\.weight in ckpt/,
  );
});
