import assert from "node:assert/strict";
import { join } from "node:path";
import { roundToDtype } from "../../adapters/hf/dtype.ts";
import { InvalidAdapterError, MissingFileError } from "../../adapters/hf/errors.ts";
import { parseModelConfig } from "../../adapters/hf/model-config.ts";
import {
  loadLoraAdapter,
  type LoraAdapter,
  type LoraConfig,
  type LoraModule,
  loraScale,
  peftTensorName,
  saveLoraAdapter,
} from "../../adapters/hf/peft-adapter.ts";
import { openSafetensors } from "../../adapters/hf/safetensors-reader.ts";
import { elementCount, namedTensor } from "../../adapters/hf/tensor.ts";
import { tinyConfigJson, uniformSource } from "./tiny-checkpoint.ts";

const base = parseModelConfig(tinyConfigJson("Qwen2ForCausalLM"));
const CONFIG: LoraConfig = {
  r: 2,
  alpha: 4,
  dropout: 0,
  targetModules: ["q_proj", "v_proj"],
  useRslora: false,
  baseModel: "polyrl/tiny",
};

function loraModule(module: string, out: number, inDim: number, r = 2): LoraModule {
  const random = uniformSource(module.length);
  const fill = (shape: number[]) =>
    Float32Array.from({ length: elementCount(shape) }, () => random());
  return {
    module,
    a: namedTensor(`${module}.lora_A`, [r, inDim], fill([r, inDim])),
    b: namedTensor(`${module}.lora_B`, [out, r], fill([out, r])),
  };
}

function tinyAdapter(modules: LoraModule[], config: LoraConfig = CONFIG): LoraAdapter {
  return { kind: "lora-adapter", config, modules: new Map(modules.map((m) => [m.module, m])) };
}

// q_proj: [heads*head_dim = 16, hidden 16]; v_proj: [kv_heads*head_dim = 8, hidden 16].
const MODULES = [0, 1].flatMap((i) => [
  loraModule(`model.layers.${i}.self_attn.q_proj`, 16, 16),
  loraModule(`model.layers.${i}.self_attn.v_proj`, 8, 16),
]);

Deno.test("PEFT naming and scale", () => {
  assert.equal(
    peftTensorName("model.layers.0.self_attn.q_proj", "B"),
    "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight",
  );
  assert.equal(loraScale(CONFIG), 2);
  assert.equal(loraScale({ ...CONFIG, useRslora: true }), 4 / Math.SQRT2);
});

Deno.test("an adapter saves in PEFT layout and loads back exactly", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-peft-" });
  await saveLoraAdapter(dir, tinyAdapter(MODULES));
  const config = JSON.parse(await Deno.readTextFile(join(dir, "adapter_config.json")));
  assert.deepEqual(
    [config.peft_type, config.task_type, config.r, config.lora_alpha, config.target_modules],
    ["LORA", "CAUSAL_LM", 2, 4, ["q_proj", "v_proj"]],
  );
  using file = await openSafetensors(join(dir, "adapter_model.safetensors"));
  assert.equal(file.names().length, 8);
  const b = file.header.entries.get(
    "base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight",
  )!;
  assert.deepEqual([b.dtype, b.shape], ["F32", [8, 2]]);
  const back = await loadLoraAdapter(dir, base);
  assert.deepEqual(back.config, CONFIG);
  assert.deepEqual([...back.modules.keys()], MODULES.map((m) => m.module).sort());
  for (const m of MODULES) {
    const got = back.modules.get(m.module)!;
    assert.deepEqual([got.a.data, got.b.data, got.a.shape], [m.a.data, m.b.data, m.a.shape]);
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a BF16 adapter round-trips to BF16-rounded values", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-peft-" });
  await saveLoraAdapter(dir, tinyAdapter(MODULES.slice(0, 1)), { dtype: "BF16" });
  const got = (await loadLoraAdapter(dir)).modules.get(MODULES[0].module)!;
  assert.deepEqual(got.b.data, roundToDtype(MODULES[0].b.data, "BF16"));
  assert.equal(got.a.dtype, "BF16");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("adapters that do not fit their config or base are refused", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-peft-" });
  const k = loraModule("model.layers.0.self_attn.k_proj", 8, 16);
  await assert.rejects(
    () => saveLoraAdapter(dir, tinyAdapter([k])),
    /module model\.layers\.0\.self_attn\.k_proj matches none of target_modules \[q_proj, v_proj\]/,
  );
  const wrongRank = loraModule("model.layers.0.self_attn.q_proj", 16, 16, 3);
  await assert.rejects(() => saveLoraAdapter(dir, tinyAdapter([wrongRank])), /must be \[2, in\]/);
  // Fits its own config but not the base: q_proj of the base is [16, 16].
  await saveLoraAdapter(dir, tinyAdapter([loraModule("model.layers.0.self_attn.q_proj", 12, 16)]));
  await assert.rejects(
    () => loadLoraAdapter(dir, base),
    /base weight is \[16, 16\] but lora_B @ lora_A is \[12, 16\]/,
  );
  await saveLoraAdapter(dir, tinyAdapter([loraModule("model.layers.9.self_attn.q_proj", 16, 16)]));
  await assert.rejects(
    () => loadLoraAdapter(dir, base),
    /is not a linear layer of the Qwen2ForCausalLM base/,
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("adapter_config options this project does not implement are refused by name", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-peft-" });
  await assert.rejects(() => loadLoraAdapter(dir), (e: Error) => {
    assert.ok(e instanceof MissingFileError);
    assert.match(e.message, /adapter_config\.json: expected the PEFT LoRA config/);
    return true;
  });
  await saveLoraAdapter(dir, tinyAdapter(MODULES));
  const path = join(dir, "adapter_config.json");
  const config = JSON.parse(await Deno.readTextFile(path));
  for (
    const [patch, pattern] of [
      [{ use_dora: true }, /use_dora = true is not supported/],
      [{ rank_pattern: { q_proj: 4 } }, /rank_pattern = \{"q_proj":4\} is not supported/],
      [{ target_modules: "q_proj|v_proj" }, /regex strings are not supported/],
      [{ peft_type: "IA3" }, /peft_type must be "LORA"/],
    ] as const
  ) {
    await Deno.writeTextFile(path, JSON.stringify({ ...config, ...patch }));
    await assert.rejects(() => loadLoraAdapter(dir), (e: Error) => {
      assert.ok(e instanceof InvalidAdapterError, `${e}`);
      assert.match(e.message, pattern);
      return true;
    });
  }
  await Deno.writeTextFile(path, JSON.stringify(config));
  await Deno.remove(join(dir, "adapter_model.safetensors"));
  await assert.rejects(
    () => loadLoraAdapter(dir),
    /adapter_model\.safetensors: expected the LoRA A\/B/,
  );
  await Deno.remove(dir, { recursive: true });
});
