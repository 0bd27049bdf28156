import assert from "node:assert/strict";
import { loadHfModel } from "../../adapters/hf/mod.ts";
import {
  embeddedModelConfig,
  initEmbeddedModel,
  saveEmbeddedModel,
} from "../../adapters/model/embedded-model.ts";
import { keyedNormal } from "./helpers.ts";

Deno.test("embedded model: init is a pure function of the seed; save/load round-trips exactly", async () => {
  const a = initEmbeddedModel(keyedNormal(1));
  const b = initEmbeddedModel(keyedNormal(1));
  const c = initEmbeddedModel(keyedNormal(2));
  const embed = (ts: typeof a) => ts.find((t) => t.name === "model.embed_tokens.weight")!.data;
  assert.deepEqual(embed(a), embed(b));
  assert.notDeepEqual(embed(a), embed(c));
  const std = Math.sqrt(embed(a).reduce((s, v) => s + v * v, 0) / embed(a).length);
  assert.ok(Math.abs(std - 0.02) < 0.001, `init std ${std}`);
  assert.ok(a.find((t) => t.name === "model.norm.weight")!.data.every((v) => v === 1));

  const dir = await Deno.makeTempDir({ prefix: "polyrl-embedded-" });
  try {
    const files = await saveEmbeddedModel(dir, a);
    assert.ok(files.includes("model.safetensors") && files.includes("tokenizer.json"));
    const loaded = await loadHfModel(dir);
    assert.deepEqual(loaded.config.hiddenSize, embeddedModelConfig().hiddenSize);
    assert.equal(loaded.tensors.size, a.length);
    for (const t of a) assert.deepEqual(loaded.tensors.get(t.name)!.data, t.data, t.name);
    assert.deepEqual(loaded.tokenizer!.encode("12+7="), [49, 50, 43, 55, 61]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the small embedded size is the same family, narrower and shallower, and saves as itself", async () => {
  const base = embeddedModelConfig("base");
  const small = embeddedModelConfig("small");
  assert.equal(small.modelType, base.modelType);
  assert.equal(small.vocabSize, base.vocabSize);
  assert.ok(small.hiddenSize < base.hiddenSize && small.numLayers < base.numLayers);
  const tensors = initEmbeddedModel(keyedNormal(1), "small");
  const count = tensors.reduce((n, t) => n + t.data.length, 0);
  const baseCount = initEmbeddedModel(keyedNormal(1)).reduce((n, t) => n + t.data.length, 0);
  assert.ok(count < baseCount / 2, `small ${count} vs base ${baseCount}`);
  const dir = await Deno.makeTempDir({ prefix: "polyrl-embedded-small-" });
  try {
    await saveEmbeddedModel(dir, tensors, "small");
    const loaded = await loadHfModel(dir);
    assert.equal(loaded.config.hiddenSize, small.hiddenSize);
    assert.equal(loaded.config.numLayers, small.numLayers);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
