/**
 * mergeLoraAdapter against the model tests' independent float64 merge (tests/model/reference.ts):
 * W + scale * B A for every adapted module, scale alpha / r (alpha / sqrt(r) with rsLoRA), every
 * other tensor untouched; modules the base lacks or shapes that do not fit are refused by name.
 */
import assert from "node:assert/strict";
import {
  InvalidAdapterError,
  loadHfModel,
  type LoraAdapter,
  mergeLoraAdapter,
  namedTensor,
} from "../../adapters/hf/mod.ts";
import { loraAdapter, loraSpec } from "../../adapters/model/mod.ts";
import { mergeLora } from "../model/reference.ts";
import { uniformSource, writeTinyCheckpoint } from "./tiny-checkpoint.ts";

async function tinyBase() {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-merge-" });
  try {
    await writeTinyCheckpoint(dir, { dtype: "F32" });
    return await loadHfModel(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function randomAdapter(
  base: Awaited<ReturnType<typeof tinyBase>>,
  useRslora: boolean,
): LoraAdapter {
  const spec = loraSpec({
    rank: 3,
    alpha: 5,
    targetModules: ["q_proj", "v_proj", "gate_proj", "down_proj"],
    useRslora,
  });
  const random = uniformSource(useRslora ? 2 : 1);
  const fill = (n: number) => Float32Array.from({ length: n }, () => random() - 0.5);
  return loraAdapter(base.config, spec, (t) => ({
    a: fill(3 * t.inFeatures),
    b: fill(t.outFeatures * 3),
  }));
}

Deno.test("mergeLoraAdapter: W + (alpha / r) B A on the adapted modules, nothing else", async () => {
  const base = await tinyBase();
  for (const useRslora of [false, true]) {
    const adapter = randomAdapter(base, useRslora);
    const scale = useRslora ? 5 / Math.sqrt(3) : 5 / 3;
    const merged = mergeLoraAdapter(base.tensors, adapter);
    const expected = mergeLora(base.tensors, adapter, scale);
    assert.deepEqual([...merged.keys()].sort(), [...base.tensors.keys()].sort());
    let changed = 0;
    for (const [name, t] of merged) {
      assert.deepEqual(t.shape, base.tensors.get(name)!.shape, name);
      assert.deepEqual(t.data, expected.get(name)!.data, name);
      if (t !== base.tensors.get(name)) changed++;
    }
    // Two attention and two MLP projections in each of the tiny model's layers.
    assert.equal(changed, adapter.modules.size);
    assert.equal(changed, 4 * base.config.numLayers);
  }
});

Deno.test("mergeLoraAdapter refuses a module the base lacks and a shape that does not fit", async () => {
  const base = await tinyBase();
  const adapter = randomAdapter(base, false);
  const [first] = adapter.modules.values();
  const moved = (module: string, b = first.b) => ({
    ...adapter,
    modules: new Map([[module, { ...first, module, b }]]),
  });
  assert.throws(
    () => mergeLoraAdapter(base.tensors, moved("model.layers.9.self_attn.q_proj")),
    (e: Error) =>
      e instanceof InvalidAdapterError &&
      /module model\.layers\.9\.self_attn\.q_proj has no model\.layers\.9\.self_attn\.q_proj\.weight/
        .test(e.message),
  );
  const wide = namedTensor(
    "b",
    [first.b.shape[0] + 1, 3],
    new Float32Array((first.b.shape[0] + 1) * 3),
  );
  assert.throws(
    () => mergeLoraAdapter(base.tensors, moved(first.module, wide)),
    /does not fit lora_B @ lora_A/,
  );
});
