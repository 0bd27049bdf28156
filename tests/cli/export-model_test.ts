/**
 * `deno task export-model` end to end: a real one-step training run (CLI in a subprocess) whose
 * solver trains a LoRA adapter on attention and MLP projections and whose verifier trains its
 * full weights; both exported, read back through adapters/hf, and their logits compared with the
 * run's final policy (the last checkpoint in the store, whose hash the run printed): exactly for
 * the PEFT adapter applied to the base, within float32 rounding for the merged checkpoint. Then
 * the refusals (exit 2, naming the problem and the fix).
 */
import assert from "node:assert/strict";
import { join, relative, resolve } from "node:path";
import {
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  type HfModel,
  loadHfModel,
  loadLoraAdapter,
  type NamedTensor,
  openSafetensors,
} from "../../adapters/hf/mod.ts";
import {
  adapterHostFeeds,
  buildLogitsGraph,
  type DecoderSpec,
  decoderSpec,
  EMBEDDED_MODEL_DIR,
  loadEmbeddedModel,
  loraParamName,
  loraParams,
  loraSpec,
  MODEL_IO,
  uploadBase,
} from "../../adapters/model/mod.ts";
import { type Feed, hostTensor, openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { IO } from "../../adapters/onnx/train-step/spec.ts";
import { hashTensors } from "../../engine/trainer/rollout/policy-pool.ts";
import { decodeSafetensors } from "../../engine/trainer/rollout/safetensors-bytes.ts";
import { type EventData, openStore, type StoredEvent } from "../../events/mod.ts";
import type { NewEvent } from "../../events/mod.ts";
import { runCli } from "../support/run-cli.ts";
import { SOLVER_LORA, trainedRunConfig, trainRun } from "../evaluation/trained-run.ts";

const EXPORT = "engine/cli/export-model.ts";
const RANK = SOLVER_LORA.rank;
const ALPHA = SOLVER_LORA.alpha;
const TARGETS = [...SOLVER_LORA.targets];

/** The final checkpoint of each worker group in the store, decoded. */
async function finalCheckpoints(storePath: string, run: string) {
  await using store = await openStore(storePath, { readOnly: true });
  const saved: EventData<"checkpoint.saved">[] = [];
  for await (const e of store.readStream(run)) {
    const event = e as StoredEvent<NewEvent>;
    if (event.type === "checkpoint.saved") saved.push(event.data);
  }
  const last = Math.max(...saved.map((c) => c.step));
  const out = new Map<string, { hash: string; tensors: Map<string, NamedTensor> }>();
  for (const c of saved.filter((c) => c.step === last)) {
    const bytes = await store.blobs.get(c.blob);
    out.set(c.workerGroup, {
      hash: c.parameterHash,
      tensors: decodeSafetensors(bytes, c.workerGroup),
    });
  }
  return out;
}

/** Logits of `tokens` under `spec` with `params` (base weights by HF name, plus LoRA feeds). */
async function logits(
  spec: DecoderSpec,
  base: ReadonlyMap<string, NamedTensor>,
  lora: Record<string, Feed>,
  tokens: readonly number[],
): Promise<Float32Array> {
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    const weights = uploadBase(runtime, spec, base);
    const session = await runtime.load(buildLogitsGraph(spec).model);
    const out = await session.run({
      ...weights.feeds,
      ...lora,
      [MODEL_IO.tokens]: hostTensor("int32", [1, tokens.length], tokens),
      [MODEL_IO.attentionMask]: hostTensor(
        "float32",
        [1, tokens.length],
        new Float32Array(tokens.length).fill(1),
      ),
    });
    const result = Float32Array.from(out.host[MODEL_IO.logits].data as Float32Array);
    await session.release();
    weights.release();
    return result;
  } finally {
    await runtime.close();
  }
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("export-model: PEFT adapter and merged checkpoints of a real run give its final policy's logits", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-export-" });
  try {
    const storePath = join(tmp, "events.sqlite");
    const printed = await trainRun(tmp, storePath, "exp");
    const checkpoints = await finalCheckpoints(storePath, "exp");
    const solver = checkpoints.get("solver")!;
    const verifier = checkpoints.get("verifier")!;
    // The store's last checkpoints are the run's final parameters.
    assert.equal(solver.hash, printed.solver);
    assert.equal(verifier.hash, printed.verifier);

    const peftDir = join(tmp, "solver-peft");
    const peft = await runCli(
      EXPORT,
      "exp",
      "--worker-group",
      "solver",
      "--out",
      peftDir,
      "--format",
      "peft",
      "--store",
      storePath,
    );
    assert.equal(peft.code, 0, peft.stderr);
    assert.match(peft.stdout, /^exported exp@0\/solver \(peft, F32\) to /m);
    // The base by its path from the adapter folder (no path of this machine), and where it is.
    const embeddedDir = EMBEDDED_MODEL_DIR.pathname.replace(/\/$/, "");
    const baseName = relative(peftDir, embeddedDir);
    assert.equal(
      peft.stdout.split("\n").at(-2),
      `base weights: ${embeddedDir}; adapter_config.json names them ${baseName} (their path ` +
        `from ${peftDir})`,
    );

    // PEFT's config keys and values (adapters/hf/peft-adapter.ts cites the PEFT lines).
    const config = JSON.parse(await Deno.readTextFile(join(peftDir, ADAPTER_CONFIG_FILE)));
    assert.equal(config.peft_type, "LORA");
    assert.equal(config.task_type, "CAUSAL_LM");
    assert.equal(config.r, RANK);
    assert.equal(config.lora_alpha, ALPHA);
    assert.equal(config.lora_dropout, 0);
    assert.deepEqual(config.target_modules, TARGETS);
    assert.equal(config.bias, "none");
    assert.equal(config.fan_in_fan_out, false);
    assert.equal(config.use_rslora, false);
    assert.equal(config.inference_mode, true);
    // The base it names loads from the adapter folder: the committed embedded model.
    assert.equal(config.base_model_name_or_path, baseName);
    assert.equal(config.revision, null);
    const base: HfModel = await loadHfModel(resolve(peftDir, config.base_model_name_or_path));

    // PEFT's tensor names and shapes: lora_A [r, in], lora_B [out, r].
    const c = base.config;
    const kvOut = c.numKvHeads * c.headDim;
    const expected = new Map<string, number[]>();
    for (let layer = 0; layer < c.numLayers; layer++) {
      const p = `base_model.model.model.layers.${layer}`;
      const shapes: [string, number, number][] = [
        ["self_attn.q_proj", c.hiddenSize, c.numHeads * c.headDim],
        ["self_attn.v_proj", c.hiddenSize, kvOut],
        ["mlp.gate_proj", c.hiddenSize, c.intermediateSize],
        ["mlp.down_proj", c.intermediateSize, c.hiddenSize],
      ];
      for (const [module, inF, outF] of shapes) {
        expected.set(`${p}.${module}.lora_A.weight`, [RANK, inF]);
        expected.set(`${p}.${module}.lora_B.weight`, [outF, RANK]);
      }
    }
    {
      using file = await openSafetensors(join(peftDir, ADAPTER_WEIGHTS_FILE));
      assert.deepEqual(new Set(file.names()), new Set(expected.keys()));
      for (const [name, shape] of expected) {
        assert.deepEqual(file.header.entries.get(name)!.shape, shape, name);
        assert.equal(file.header.entries.get(name)!.dtype, "F32", name);
      }
    }

    // The run's final policy: the base with the checkpoint's LoRA matrices fed beside it.
    const spec = decoderSpec(c, loraSpec({ rank: RANK, alpha: ALPHA, targetModules: TARGETS }));
    const fromRun = Object.fromEntries(
      loraParams(spec).map((p) => [
        IO.param(p.name),
        hostTensor("float32", p.shape, solver.tensors.get(p.name)!.data),
      ]),
    );
    const tokens = base.tokenizer!.encode("Compute 17 + 25 * 3 and box the answer.");
    const policy = await logits(spec, base.tensors, fromRun, tokens);
    const untrained = await logits(decoderSpec(c, null), base.tensors, {}, tokens);
    // The adapter moved the policy, so the comparisons below can tell it from the base.
    assert.ok(maxAbsDiff(policy, untrained) > 1e-3, "the trained adapter changes the logits");

    // PEFT files read back and applied to the base: the same numbers, bit for bit.
    const adapter = await loadLoraAdapter(peftDir, c);
    const inSpecOrder = loraParams(spec).map((p) => {
      const [module, which] = [p.name.replace(/\.lora_[AB]\.weight$/, ""), p.name.at(-8)];
      const m = adapter.modules.get(module)!;
      const t = which === "A" ? m.a : m.b;
      return { ...t, name: loraParamName(module, which as "A" | "B") };
    });
    assert.equal(hashTensors(inSpecOrder), solver.hash);
    assert.deepEqual(
      await logits(spec, base.tensors, adapterHostFeeds(spec, adapter), tokens),
      policy,
    );

    // Merged: W + (alpha / r) B A as a plain checkpoint; within float32 rounding of the policy.
    const mergedDir = join(tmp, "solver-merged");
    const merged = await runCli(
      EXPORT,
      "latest",
      "--worker-group",
      "solver",
      "--out",
      mergedDir,
      "--format",
      "merged",
      "--store",
      storePath,
    );
    assert.equal(merged.code, 0, merged.stderr);
    for (const file of ["config.json", "model.safetensors", "tokenizer.json"]) {
      assert.ok(await exists(join(mergedDir, file)), file);
    }
    const mergedModel = await loadHfModel(mergedDir);
    assert.ok(mergedModel.tokenizer, "the merged checkpoint carries the base's tokenizer");
    assert.deepEqual(mergedModel.tokenizer.encode("17 + 25"), base.tokenizer!.encode("17 + 25"));
    const mergedLogits = await logits(
      decoderSpec(mergedModel.config, null),
      mergedModel.tensors,
      {},
      tokens,
    );
    const drift = maxAbsDiff(mergedLogits, policy);
    assert.ok(drift < 1e-4, `merged logits within float32 rounding of the policy: ${drift}`);

    // Full weights: merged is the checkpoint itself, exactly, and the policy's logits exactly.
    const fullDir = join(tmp, "verifier-merged");
    const full = await runCli(
      EXPORT,
      "exp@0",
      "--worker-group",
      "verifier",
      "--out",
      fullDir,
      "--format",
      "merged",
      "--store",
      storePath,
    );
    assert.equal(full.code, 0, full.stderr);
    const fullModel = await loadHfModel(fullDir);
    for (const [name, t] of verifier.tensors) {
      assert.deepEqual(fullModel.tensors.get(name)!.data, t.data, name);
    }
    const embedded = await loadEmbeddedModel();
    assert.deepEqual(
      await logits(decoderSpec(fullModel.config, null), fullModel.tensors, {}, tokens),
      await logits(decoderSpec(embedded.config, null), verifier.tensors, {}, tokens),
    );

    // Refusals: exit 2 with the problem and the fix, nothing written.
    const refused = async (expected: RegExp, ...args: string[]) => {
      const r = await runCli(EXPORT, ...args, "--store", storePath);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, expected);
    };
    const nowhere = join(tmp, "not-written");
    await refused(
      /verifier of run exp trained its full weights, not a LoRA adapter; export it with --format merged/,
      "exp",
      "--worker-group",
      "verifier",
      "--out",
      nowhere,
      "--format",
      "peft",
    );
    assert.equal(await exists(nowhere), false);
    await refused(
      /checkpoints of worker groups solver, verifier at step 0; choose one with --worker-group/,
      "exp",
      "--out",
      nowhere,
      "--format",
      "peft",
    );
    await refused(
      /no checkpoint of worker group critic/,
      "exp",
      "--worker-group",
      "critic",
      "--out",
      nowhere,
      "--format",
      "peft",
    );
    await refused(/has no run nope/, "nope", "--out", nowhere, "--format", "peft");
    await refused(
      /exp@5: the run has no checkpoint at step 5; its checkpoints are at steps 0/,
      "exp@5",
      "--worker-group",
      "solver",
      "--out",
      nowhere,
      "--format",
      "peft",
    );
    await refused(
      /--format must be peft .* or merged/,
      "exp",
      "--out",
      nowhere,
      "--format",
      "gguf",
    );
    await refused(/--out DIR is required/, "exp", "--format", "peft");
    await refused(
      /--dtype must be one of F32, F16, BF16/,
      "exp",
      "--out",
      nowhere,
      "--format",
      "peft",
      "--dtype",
      "I8",
    );
    await refused(
      /--out .* is not empty/,
      "exp",
      "--worker-group",
      "solver",
      "--out",
      peftDir,
      "--format",
      "peft",
    );
    assert.equal(await exists(nowhere), false);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("export-model: a base from the Hugging Face Hub cache is named by its repo id and commit", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-export-hub-" });
  try {
    // The embedded model's files laid out as huggingface_hub caches a download of polyrl/tiny-math.
    const commit = "0123456789abcdef0123456789abcdef01234567";
    const snapshot = join(tmp, "hub", "models--polyrl--tiny-math", "snapshots", commit);
    await Deno.mkdir(snapshot, { recursive: true });
    for await (const file of Deno.readDir(EMBEDDED_MODEL_DIR)) {
      if (file.isFile) {
        await Deno.copyFile(new URL(file.name, EMBEDDED_MODEL_DIR), join(snapshot, file.name));
      }
    }
    const config = trainedRunConfig();
    const agents = (config.agents as Record<string, unknown>[]).map((a) => ({
      ...a,
      model: snapshot,
    }));
    const configPath = join(tmp, "config.json");
    await Deno.writeTextFile(configPath, JSON.stringify({ ...config, agents }));
    const storePath = join(tmp, "events.sqlite");
    const trained = await runCli(
      "engine/cli/train.ts",
      ...["--config", configPath, "--store", storePath, "--run-id", "hub"],
    );
    assert.equal(trained.code, 0, trained.stderr);

    const out = join(tmp, "adapter");
    const r = await runCli(
      EXPORT,
      ...[
        "hub",
        "--worker-group",
        "solver",
        "--out",
        out,
        "--format",
        "peft",
        "--store",
        storePath,
      ],
    );
    assert.equal(r.code, 0, r.stderr);
    const written = JSON.parse(await Deno.readTextFile(join(out, ADAPTER_CONFIG_FILE)));
    assert.equal(written.base_model_name_or_path, "polyrl/tiny-math");
    assert.equal(written.revision, commit);
    assert.equal(
      r.stdout.split("\n").at(-2),
      `base weights: ${snapshot}; adapter_config.json names them polyrl/tiny-math at revision ` +
        `${commit} (their Hugging Face Hub repo)`,
    );
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
