import assert from "node:assert/strict";
import { join } from "node:path";
import { openCheckpoint } from "../../adapters/hf/checkpoint-reader.ts";
import { writeCheckpointTensors } from "../../adapters/hf/checkpoint-writer.ts";
import { roundToDtype } from "../../adapters/hf/dtype.ts";
import {
  HfError,
  MissingFileError,
  MissingTensorError,
  ShapeMismatchError,
  UnexpectedTensorError,
  UnsupportedArchitectureError,
} from "../../adapters/hf/errors.ts";
import { loadHfModel } from "../../adapters/hf/load-model.ts";
import { saveHfModel } from "../../adapters/hf/save-model.ts";
import { namedTensor } from "../../adapters/hf/tensor.ts";
import { tinyConfigJson, writeTinyCheckpoint } from "./tiny-checkpoint.ts";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-hf-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function rejectsWith(dir: string, check: (e: HfError) => void): Promise<void> {
  await assert.rejects(() => loadHfModel(dir), (e: Error) => {
    assert.ok(e instanceof HfError, `not an HfError: ${e}`);
    check(e);
    return true;
  });
}

Deno.test("a sharded BF16 Qwen2 checkpoint loads with every tensor bit-exact", async () => {
  await withDir(async (dir) => {
    const fixture = await writeTinyCheckpoint(dir);
    assert.ok(fixture.files.length >= 3, `expected several shards, got ${fixture.files}`);
    const index = JSON.parse(await Deno.readTextFile(join(dir, "model.safetensors.index.json")));
    let elements = 0;
    for (const t of fixture.tensors.values()) elements += t.data.length;
    assert.equal(index.metadata.total_size, 2 * elements, "BF16 total_size = 2 bytes per value");
    const model = await loadHfModel(dir);
    assert.equal(model.config.architecture, "Qwen2ForCausalLM");
    assert.deepEqual([model.config.qkvBias, model.config.headDim], [true, 4]);
    assert.deepEqual([...model.tensors.keys()].sort(), [...fixture.tensors.keys()].sort());
    for (const [name, want] of fixture.tensors) {
      const got = model.tensors.get(name)!;
      assert.deepEqual([got.dtype, got.shape], ["BF16", want.shape], name);
      assert.deepEqual(got.data, want.data, name);
    }
    assert.deepEqual(model.tokenizer!.eosTokenIds, [262]);
  });
});

Deno.test("Qwen3 (qk-norm) and tied-embedding Llama fixtures load", async () => {
  await withDir(async (dir) => {
    await writeTinyCheckpoint(dir, { architecture: "Qwen3ForCausalLM", dtype: "F16" });
    const model = await loadHfModel(dir);
    assert.deepEqual(model.tensors.get("model.layers.1.self_attn.q_norm.weight")!.shape, [4]);
    assert.equal(model.tensors.has("model.layers.0.self_attn.q_proj.bias"), false);
  });
  await withDir(async (dir) => {
    await writeTinyCheckpoint(dir, {
      architecture: "LlamaForCausalLM",
      configOverrides: { tie_word_embeddings: true },
      maxShardBytes: 1e9,
    });
    const model = await loadHfModel(dir);
    assert.equal(model.tensors.has("lm_head.weight"), false);
    assert.deepEqual(
      [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".safetensors")),
      ["model.safetensors"],
    );
  });
});

Deno.test("a config that disagrees with the weights names the tensor and both shapes", async () => {
  await withDir(async (dir) => {
    const fixture = await writeTinyCheckpoint(dir);
    const config = { ...fixture.configJson, intermediate_size: 48 };
    await Deno.writeTextFile(join(dir, "config.json"), JSON.stringify(config));
    await rejectsWith(dir, (e) => {
      assert.ok(e instanceof ShapeMismatchError);
      assert.equal(e.tensor, "model.layers.0.mlp.gate_proj.weight");
      assert.deepEqual([e.expected, e.actual], [[48, 16], [40, 16]]);
    });
  });
});

Deno.test("missing, unexpected and ignorable tensors", async () => {
  await withDir(async (dir) => {
    const fixture = await writeTinyCheckpoint(dir, { maxShardBytes: 1e9 });
    const all = [...fixture.tensors.values()];
    const write = (list: typeof all) => writeCheckpointTensors(dir, list, { dtype: "BF16" });
    await write(all.filter((t) => t.name !== "model.layers.1.self_attn.v_proj.bias"));
    await rejectsWith(dir, (e) => {
      assert.ok(e instanceof MissingTensorError);
      assert.equal(e.tensor, "model.layers.1.self_attn.v_proj.bias");
    });
    const extra = namedTensor("model.layers.0.mlp.extra.weight", [2], new Float32Array(2));
    await write([...all, extra]);
    await rejectsWith(dir, (e) => {
      assert.ok(e instanceof UnexpectedTensorError);
      assert.equal(e.tensor, "model.layers.0.mlp.extra.weight");
    });
    const invFreq = namedTensor(
      "model.layers.0.self_attn.rotary_emb.inv_freq",
      [2],
      new Float32Array(2),
    );
    await write([...all, invFreq]);
    const model = await loadHfModel(dir);
    assert.deepEqual(model.ignoredTensors, [invFreq.name]);
    assert.equal(model.tensors.has(invFreq.name), false);
  });
});

Deno.test("missing files are named with what they should contain", async () => {
  await withDir(async (dir) => {
    const fixture = await writeTinyCheckpoint(dir);
    const shard = fixture.files.find((f) => f.startsWith("model-00002"))!;
    await Deno.remove(join(dir, shard));
    await rejectsWith(dir, (e) => {
      assert.ok(e instanceof MissingFileError);
      assert.equal(e.path, join(dir, shard));
      assert.match(
        e.message,
        /expected the shard model\.safetensors\.index\.json lists for tensor /,
      );
    });
    for (const f of fixture.files) await Deno.remove(join(dir, f)).catch(() => {});
    await rejectsWith(dir, (e) => {
      assert.ok(e instanceof MissingFileError);
      assert.match(e.message, /model\.safetensors: expected the model weights \(or a sharded /);
    });
    await Deno.remove(join(dir, "config.json"));
    await rejectsWith(dir, (e) => {
      assert.ok(e instanceof MissingFileError);
      assert.match(e.message, /config\.json: expected the model config/);
    });
  });
});

Deno.test("an index entry absent from its shard is reported against that shard", async () => {
  await withDir(async (dir) => {
    await writeTinyCheckpoint(dir);
    const indexPath = join(dir, "model.safetensors.index.json");
    const index = JSON.parse(await Deno.readTextFile(indexPath));
    const [name, file] = Object.entries(index.weight_map)[0] as [string, string];
    const other = Object.values(index.weight_map).find((f) => f !== file) as string;
    index.weight_map[name] = other;
    await Deno.writeTextFile(indexPath, JSON.stringify(index));
    await assert.rejects(() => openCheckpoint(dir).then((c) => c.info()), (e: Error) => {
      assert.ok(e instanceof MissingTensorError);
      assert.equal(e.tensor, name);
      assert.match(e.message, new RegExp(`${other.replaceAll(".", "\\.")} \\(the shard`));
      return true;
    });
  });
});

Deno.test("an unsupported architecture stops the load before weights are read", async () => {
  await withDir(async (dir) => {
    await writeTinyCheckpoint(dir);
    const config = { ...tinyConfigJson("Qwen2ForCausalLM"), architectures: ["GPT2LMHeadModel"] };
    await Deno.writeTextFile(join(dir, "config.json"), JSON.stringify(config));
    await rejectsWith(dir, (e) => {
      assert.ok(e instanceof UnsupportedArchitectureError);
      assert.match(e.message, /supported: Qwen2ForCausalLM, Qwen3ForCausalLM, LlamaForCausalLM/);
    });
  });
});

Deno.test("save then load round-trips config, weights (per dtype) and tokenizer", async () => {
  await withDir(async (root) => {
    const src = join(root, "src");
    await Deno.mkdir(src);
    await writeTinyCheckpoint(src, { architecture: "Qwen3ForCausalLM", dtype: "F32" });
    const model = await loadHfModel(src);
    for (const dtype of ["F32", "F16", "BF16"] as const) {
      const out = join(root, dtype);
      const files = await saveHfModel(out, model.config, model.tensors, {
        dtype,
        tokenizerFrom: src,
      });
      assert.deepEqual(files, [
        "config.json",
        "generation_config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
      ]);
      const back = await loadHfModel(out);
      assert.deepEqual({ ...back.config, raw: null, torchDtype: null }, {
        ...model.config,
        raw: null,
        torchDtype: null,
      });
      assert.equal(
        back.config.torchDtype,
        { F32: "float32", F16: "float16", BF16: "bfloat16" }[dtype],
      );
      for (const [name, t] of model.tensors) {
        assert.deepEqual(
          back.tensors.get(name)!.data,
          roundToDtype(t.data, dtype),
          `${dtype} ${name}`,
        );
      }
      const text = "<|im_start|>user\n the 12<|im_end|>";
      assert.deepEqual(back.tokenizer!.encode(text), model.tokenizer!.encode(text));
    }
  });
});

Deno.test("saving refuses tensors that do not fit the config, before writing", async () => {
  await withDir(async (dir) => {
    const fixture = await writeTinyCheckpoint(dir);
    const tensors = new Map(fixture.tensors);
    tensors.set("model.norm.weight", namedTensor("model.norm.weight", [15], new Float32Array(15)));
    const out = join(dir, "out");
    await assert.rejects(() => saveHfModel(out, fixture.config, tensors), ShapeMismatchError);
    await assert.rejects(() => Deno.stat(out), Deno.errors.NotFound);
  });
});
