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
