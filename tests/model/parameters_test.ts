import assert from "node:assert/strict";
import { parseModelConfig } from "../../adapters/hf/mod.ts";
import { ModelError } from "../../adapters/model/errors.ts";
import { loraSpec, loraTargets } from "../../adapters/model/lora.ts";
import {
  allParams,
  decoderSpec,
  paramCount,
  trainableParams,
} from "../../adapters/model/parameters.ts";
import { embeddedModelConfig } from "../../adapters/model/embedded-model.ts";
import { tinyConfigJson } from "../hf/tiny-checkpoint.ts";

const tiny = parseModelConfig(tinyConfigJson("Qwen2ForCausalLM"));

Deno.test("parameter counts of the tiny Qwen2 config, computed by hand", () => {
  // V=272, d=16, I=40, L=2, 4 q heads, 2 kv heads, head_dim 4, untied.
  const embed = 272 * 16;
  const perLayer = 16 + (16 * 16 + 16) + 2 * (8 * 16 + 8) + 16 * 16 + 16 + 3 * 40 * 16;
  assert.equal(perLayer, 2752);
  const full = decoderSpec(tiny);
  assert.equal(paramCount(trainableParams(full)), embed + 2 * perLayer + 16 + embed);
  assert.equal(paramCount(trainableParams(full)), 14224);

  // LoRA r=2 on q (16 -> 16) and v (16 -> 8): r * (in + out) per module.
  const lora = decoderSpec(
    tiny,
    loraSpec({ rank: 2, alpha: 4, targetModules: ["q_proj", "v_proj"] }),
  );
  assert.equal(paramCount(trainableParams(lora)), 2 * (2 * (16 + 16) + 2 * (16 + 8)));
  assert.equal(paramCount(allParams(lora)), 14224 + 224);
});

Deno.test("tied embeddings count once; the embedded model is about 1.2M parameters", () => {
  const tied = parseModelConfig({
    ...tinyConfigJson("LlamaForCausalLM"),
    tie_word_embeddings: true,
  });
  const untied = parseModelConfig(tinyConfigJson("LlamaForCausalLM"));
  const diff = paramCount(trainableParams(decoderSpec(untied))) -
    paramCount(trainableParams(decoderSpec(tied)));
  assert.equal(diff, 272 * 16);
  const embedded = paramCount(trainableParams(decoderSpec(embeddedModelConfig())));
  // 259*128 embedding + 6 layers * 197,120 + final norm 128.
  assert.equal(embedded, 259 * 128 + 6 * 197_120 + 128);
});

Deno.test("LoRA targets match module suffixes and unknown targets are refused by name", () => {
  const spec = loraSpec({ rank: 4, alpha: 8, targetModules: ["v_proj", "gate_proj"] });
  assert.deepEqual(loraTargets(tiny, spec).map((t) => t.module), [
    "model.layers.0.self_attn.v_proj",
    "model.layers.0.mlp.gate_proj",
    "model.layers.1.self_attn.v_proj",
    "model.layers.1.mlp.gate_proj",
  ]);
  assert.throws(
    () => decoderSpec(tiny, loraSpec({ rank: 4, alpha: 8, targetModules: ["qkv_proj"] })),
    (e: unknown) => e instanceof ModelError && /qkv_proj matches no linear layer/.test(e.message),
  );
  assert.throws(() => loraSpec({ rank: 0, alpha: 8, targetModules: ["q_proj"] }), ModelError);
});
