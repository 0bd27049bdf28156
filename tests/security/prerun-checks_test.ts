/**
 * `deno task train` refuses, before `run.started` is recorded, what used to record a run that then
 * failed (or ran on garbage): `sampling.max_tokens` that leaves no room for a prompt, fused ops
 * the model's head size does not allow, NaN weights,
 * a tokenizer whose vocabulary cannot encode the task, a config.json size past its limit, a config
 * file nested past the stack. Each exits 2 with one error line naming the problem and the fix,
 * prints no run id, and leaves the folder byte-identical (sha256 of every file): no store made,
 * and an existing store and its blobs untouched.
 */
import assert from "node:assert/strict";
import { initEmbeddedModel, saveEmbeddedModel } from "../../adapters/model/mod.ts";
import { fillNormal, randomStream } from "../../engine/random/mod.ts";
import { writeTinyCheckpoint } from "../hf/tiny-checkpoint.ts";
import {
  type CliResult,
  errorLines,
  fingerprint,
  runCli,
  runsStore,
  withTempDir,
} from "./store-helpers.ts";

const TRAIN = "engine/cli/train.ts";
const SMOKE = ["--preset", "smoke", "--steps", "1", "--device", "cpu"];

/** A random model of the embedded architecture, as an HF directory at `dir`. */
async function randomModel(dir: string): Promise<void> {
  await saveEmbeddedModel(
    dir,
    initEmbeddedModel((purpose, out, std) =>
      fillNormal(randomStream({ seed: 5, purpose }), out, { std })
    ),
  );
}

/** Rewrites the JSON file at `path` with `edit`. */
async function editJson(path: string, edit: (json: Record<string, unknown>) => void) {
  const json = JSON.parse(await Deno.readTextFile(path));
  edit(json);
  await Deno.writeTextFile(path, JSON.stringify(json));
}

/**
 * Runs `train ARGS` against a store that holds a run with a blob and, unless `existingOnly`,
 * against a store path that does not exist: each refused with `pattern`, the folder
 * byte-identical.
 */
async function assertRefusedBeforeRun(
  dir: string,
  args: readonly string[],
  pattern: RegExp,
  { existingOnly = false } = {},
) {
  const existing = `${dir}/existing.sqlite`;
  await runsStore(existing, ["earlier-run"]);
  const before = await fingerprint(dir);
  const stores = existingOnly ? [existing] : [existing, `${dir}/runs/events.sqlite`];
  for (const store of stores) {
    const what = `train ${args.join(" ")} --store ${store}`;
    const result: CliResult = await runCli(TRAIN, [...args, "--store", store], dir);
    assert.equal(result.code, 2, `${what}: ${result.stderr}`);
    const lines = errorLines(result);
    assert.equal(lines.length, 1, `${what}: ${result.stderr}`);
    assert.match(lines[0], pattern, what);
    assert.doesNotMatch(result.stdout + result.stderr, /run id:/, what);
    assert.deepEqual(await fingerprint(dir), before, what);
  }
}

Deno.test("sampling.max_tokens past the model's context: refused with the context and the largest allowed", async () => {
  await withTempDir(async (dir) => {
    const config = `${dir}/config.json`;
    await Deno.writeTextFile(
      config,
      JSON.stringify({ extends: "smoke", steps: 1, sampling: { max_tokens: 1024 } }),
    );
    await assertRefusedBeforeRun(
      dir,
      ["--config", config, "--device", "cpu"],
      /^error: sampling\.max_tokens = 1024 leaves no room for a prompt in the context of model embedded \(max_position_embeddings 1024\); set sampling\.max_tokens to at most 1023$/,
    );
  });
});

Deno.test("runtime.fused_ops attention for a head size its kernel does not take: refused with the size", async () => {
  await withTempDir(async (dir) => {
    const model = `${dir}/narrow-heads`;
    await Deno.mkdir(model);
    await writeTinyCheckpoint(model); // head_dim 4
    await assertRefusedBeforeRun(
      dir,
      [...SMOKE, "--model", model, "--set", 'runtime.fused_ops=["attention"]'],
      /^error: runtime\.fused_ops, for --model .*narrow-heads: attention needs a head_dim that is a multiple of 8 \(onnxruntime's GroupQueryAttention\), and the model's is 4; leave attention out$/,
    );
  });
});

Deno.test("eval --max-tokens past the model's context: refused before its run.started", async () => {
  await withTempDir(async (dir) => {
    const bench = `${dir}/bench.jsonl`;
    await Deno.writeTextFile(bench, '{"problem": "What is 1 + 1?", "answer": "2"}\n');
    const existing = `${dir}/existing.sqlite`;
    await runsStore(existing, ["earlier-run"]);
    const before = await fingerprint(dir);
    const args = ["--model", "embedded", "--data", bench, "--n", "1", "--max-tokens", "1024"];
    const result = await runCli("engine/cli/eval.ts", [...args, "--store", existing], dir);
    assert.equal(result.code, 2, result.stderr);
    assert.deepEqual(errorLines(result), [
      "error: --max-tokens = 1024 leaves no room for a prompt in the context of --model " +
      "embedded (max_position_embeddings 1024); set --max-tokens to at most 1023",
    ]);
    assert.doesNotMatch(result.stdout + result.stderr, /run id:/);
    assert.deepEqual(await fingerprint(dir), before);
  });
});

Deno.test("a NaN weight: refused naming the tensor before run.started", async () => {
  await withTempDir(async (dir) => {
    const model = `${dir}/model`;
    await randomModel(model);
    // The first float of the first tensor's data (safetensors: 8-byte header length, header).
    const bytes = await Deno.readFile(`${model}/model.safetensors`);
    const view = new DataView(bytes.buffer);
    const headerLength = Number(view.getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
    const [name, entry] = Object.entries(header)
      .filter(([key]) => key !== "__metadata__")
      .find(([, e]) => (e as { data_offsets: number[] }).data_offsets[0] === 0)! as [
        string,
        { dtype: string },
      ];
    assert.equal(entry.dtype, "F32");
    view.setFloat32(8 + headerLength, NaN, true);
    await Deno.writeFile(`${model}/model.safetensors`, bytes);
    await assertRefusedBeforeRun(
      dir,
      [...SMOKE, "--model", model],
      new RegExp(
        `^error: ${model}: tensor ${name.replaceAll(".", "\\.")} holds NaN at element 0; a ` +
          `model's weights must be finite numbers \\(re-export or re-download the checkpoint\\)$`,
      ),
      // The weights are checked as they load, once the store is open (a new one is made empty).
      { existingOnly: true },
    );
  });
});

Deno.test("a tokenizer.json with an empty vocabulary: refused naming the file", async () => {
  await withTempDir(async (dir) => {
    const model = `${dir}/model`;
    await randomModel(model);
    await editJson(`${model}/tokenizer.json`, (json) => {
      const bpe = json.model as Record<string, unknown>;
      bpe.vocab = {};
      bpe.merges = [];
    });
    await assertRefusedBeforeRun(
      dir,
      [...SMOKE, "--model", model],
      new RegExp(
        `^error: ${model}/tokenizer\\.json: has an empty vocabulary \\(model\\.vocab holds no ` +
          "tokens\\); give the model the tokenizer\\.json it was trained with$",
      ),
    );
  });
});

Deno.test("a tokenizer.json whose vocabulary cannot encode the task's text: refused", async () => {
  await withTempDir(async (dir) => {
    const model = `${dir}/model`;
    await randomModel(model);
    // Ten control bytes: no character of an arithmetic question is among them.
    await editJson(`${model}/tokenizer.json`, (json) => {
      const bpe = json.model as { vocab: Record<string, number>; merges: unknown[] };
      bpe.vocab = Object.fromEntries(Object.entries(bpe.vocab).filter(([, id]) => id < 10));
      bpe.merges = [];
    });
    await assertRefusedBeforeRun(
      dir,
      [...SMOKE, "--model", model],
      new RegExp(
        `^error: the tokenizer\\.json of --model ${model} encodes the task's text ".+" to no ` +
          "tokens: its vocabulary is too small for the task; give the model the tokenizer\\.json " +
          "it was trained with$",
      ),
    );
  });
});

Deno.test("max_position_embeddings 2^40: refused naming the key and its limit", async () => {
  await withTempDir(async (dir) => {
    const model = `${dir}/model`;
    await randomModel(model);
    await editJson(`${model}/config.json`, (json) => {
      json.max_position_embeddings = 2 ** 40;
    });
    await assertRefusedBeforeRun(
      dir,
      [...SMOKE, "--model", model],
      new RegExp(
        `^error: --model ${model}: ${model}/config\\.json: field max_position_embeddings must be ` +
          "at most 16777216, its limit, got 1099511627776$",
      ),
    );
  });
});

Deno.test("workflow.params nested 5,000 deep: refused naming the nesting limit", async () => {
  await withTempDir(async (dir) => {
    const config = `${dir}/config.json`;
    const depth = 5000;
    await Deno.writeTextFile(
      config,
      `{"extends": "smoke", "workflow": {"kind": "refine", "params": ${'{"a": '.repeat(depth)}1${
        "}".repeat(depth)
      }}}`,
    );
    const result = await runCli(
      TRAIN,
      ["--config", config, "--store", `${dir}/events.sqlite`],
      dir,
    );
    assert.equal(result.code, 2, result.stderr);
    assert.match(
      result.stderr,
      /^error: invalid config .*config\.json:\n {2}workflow\.params\.a\.a\.a\.a\.\.\.\. = "\(objects and arrays nested more than 64 levels deep\)" is not allowed; expected at most 64 levels of nesting\n/,
    );
    assert.deepEqual(Object.keys(await fingerprint(dir)), ["config.json"]);
  });
});
