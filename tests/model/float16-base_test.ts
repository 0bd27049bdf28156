/**
 * A frozen base stored in float16 (`decoderSpec(config, lora, { baseDtype: "float16" })`): the
 * decoder casts each weight to float32 where it is used, so the model computes exactly what a
 * float32 base holding the same half-precision-rounded weights computes; against the unrounded
 * float32 base it differs by the rounding of the weights alone. LoRA matrices, gradients and Adam
 * state stay float32. Checked on the cpu backend through the logits graph, KV-cache generation
 * and the train step.
 */
import assert from "node:assert/strict";
import { type NamedTensor, namedTensor } from "../../adapters/hf/mod.ts";
import { createGenerator, type TokenChooser } from "../../adapters/model/generate.ts";
import { buildLogitsGraph, MODEL_IO, trainStepConfig } from "../../adapters/model/graphs.ts";
import { initBaseTensors, initLoraAdapter } from "../../adapters/model/init.ts";
import { loraSpec } from "../../adapters/model/lora.ts";
import { allParams, decoderSpec } from "../../adapters/model/parameters.ts";
import { adapterHostFeeds, paramHostTensor, uploadBase } from "../../adapters/model/weights.ts";
import { ModelError } from "../../adapters/model/errors.ts";
import { hostTensor, type Runtime } from "../../adapters/onnx/runtime/mod.ts";
import { openTrainStep } from "../../adapters/onnx/train-step/runner.ts";
import { IO, TrainStepError } from "../../adapters/onnx/train-step/spec.ts";
import { plainHyper, tinyBatch } from "../onnx-train/tiny-policy.ts";
import { keyedNormal, maxAbsDiff, tinyModel, withCpu } from "./helpers.ts";

// Half precision keeps 11 significant bits: each weight moves by at most 2^-12 of itself. Through
// the tiny model that moved the logits by at most 7.9e-5 here; the bound leaves 25x room and must
// stay 50x below the logits' own spread (asserted), so a wrong cast (bits read as float32, a
// dropped weight) cannot pass it.
const ROUNDING_TOLERANCE = 2e-3;
// The same weights, float16-fed and cast vs float32-fed: identical products; the bound only
// absorbs summation-order noise.
const SAME_WEIGHTS_TOLERANCE = 1e-5;

const lora = loraSpec({
  rank: 4,
  alpha: 8,
  targetModules: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
});

/** Weights with float32 detail (random N(0, 0.02)), so that rounding to float16 changes them. */
async function fixture() {
  const model = await tinyModel("Qwen2ForCausalLM");
  const tensors = new Map(initBaseTensors(model.config, keyedNormal(5)).map((t) => [t.name, t]));
  const rounded = new Map<string, NamedTensor>(
    [...tensors].map(([name, t]) => [
      name,
      namedTensor(name, t.shape, Float32Array.from(Float16Array.from(t.data))),
    ]),
  );
  const half = decoderSpec(model.config, lora, { baseDtype: "float16" });
  const full = decoderSpec(model.config, lora);
  return { config: model.config, tensors, rounded, half, full };
}

const prompt = [5, 9, 2, 77, 31, 12, 200, 40];

async function logits(
  rt: Runtime,
  spec: ReturnType<typeof decoderSpec>,
  tensors: Map<string, NamedTensor>,
) {
  const base = uploadBase(rt, spec, tensors);
  const adapter = initLoraAdapter(spec, keyedNormal(7), "a");
  const graph = await rt.load(buildLogitsGraph(spec).model);
  const out = await graph.run({
    ...base.feeds,
    ...adapterHostFeeds(spec, adapter),
    [MODEL_IO.tokens]: hostTensor("int32", [1, prompt.length], prompt),
    [MODEL_IO.attentionMask]: hostTensor("float32", [1, prompt.length], prompt.map(() => 1)),
  });
  await graph.release();
  base.release();
  return out.host[MODEL_IO.logits].data as Float32Array;
}

Deno.test("float16 base: graph inputs are float16 for the base, float32 for LoRA; full fine-tuning refuses it", async () => {
  const { half, config } = await fixture();
  const params = allParams(half);
  assert.ok(params.filter((p) => p.name.includes("lora_")).every((p) => p.dtype === undefined));
  assert.ok(params.filter((p) => !p.name.includes("lora_")).every((p) => p.dtype === "float16"));
  assert.throws(() => decoderSpec(config, null, { baseDtype: "float16" }), ModelError);
  assert.throws(
    () => decoderSpec(config, lora, { baseDtype: "bfloat16" as "float16" }),
    /use float32 or float16/,
  );
});

Deno.test("float16 base: logits equal a float32 base of the rounded weights, and the unrounded one within rounding", async () => {
  const f = await fixture();
  await withCpu(async (rt) => {
    const half = await logits(rt, f.half, f.tensors);
    const sameWeights = await logits(rt, f.full, f.rounded);
    const exact = await logits(rt, f.full, f.tensors);
    assert.ok(maxAbsDiff(half, sameWeights) < SAME_WEIGHTS_TOLERANCE, "same weights");
    const drift = maxAbsDiff(half, exact);
    assert.ok(drift > 0, "rounding to float16 changed nothing: the weights were not rounded");
    assert.ok(drift < ROUNDING_TOLERANCE, `float16 vs float32 logits differ by ${drift}`);
    const spread = Math.max(...exact) - Math.min(...exact);
    assert.ok(spread > 50 * ROUNDING_TOLERANCE, `logit spread ${spread} too small to test`);
  });
});

Deno.test("float16 base: KV-cache generation picks the tokens the float32 base of the rounded weights picks", async () => {
  const f = await fixture();
  const greedy: TokenChooser = (l) => l.indexOf(Math.max(...l));
  await withCpu(async (rt) => {
    const run = async (spec: ReturnType<typeof decoderSpec>, tensors: Map<string, NamedTensor>) => {
      const base = uploadBase(rt, spec, tensors);
      const gen = await createGenerator(rt, spec);
      const adapter = initLoraAdapter(spec, keyedNormal(7), "a");
      const rows = await gen.generate({ ...base.feeds, ...adapterHostFeeds(spec, adapter) }, {
        prompts: [prompt, prompt.slice(0, 3)],
        maxTokens: 6,
        temperature: 0,
        choose: greedy,
      });
      await gen.release();
      base.release();
      return rows;
    };
    const half = await run(f.half, f.tensors);
    const same = await run(f.full, f.rounded);
    assert.deepEqual(half.map((r) => r.tokens), same.map((r) => r.tokens));
    half.forEach((r, i) => assert.ok(maxAbsDiff(r.logprobs, same[i].logprobs) < 1e-5));
  });
});

Deno.test("float16 base: the train step updates float32 LoRA matrices as with the float32 base of the rounded weights", async () => {
  const f = await fixture();
  const hyper = plainHyper(1e-2);
  const batch = tinyBatch({ vocab: f.config.vocabSize, dim: 0, hidden: 0, rank: 0 }, 3, 10, 4);
  await withCpu(async (rt) => {
    const train = async (
      spec: ReturnType<typeof decoderSpec>,
      tensors: Map<string, NamedTensor>,
    ) => {
      const base = uploadBase(rt, spec, tensors);
      const adapter = initLoraAdapter(spec, keyedNormal(7), "a");
      const initial = Object.fromEntries(
        Object.entries(adapterHostFeeds(spec, adapter)).map((
          [k, v],
        ) => [k.slice(IO.param("").length), v]),
      );
      const runner = await openTrainStep({
        runtime: rt,
        config: trainStepConfig(spec),
        initial,
        frozen: base.tensors,
      });
      const norms = [];
      for (let i = 0; i < 3; i++) norms.push((await runner.step(batch, hyper)).gradNorm);
      const name = "model.layers.1.mlp.down_proj.lora_B.weight";
      const b = await runner.readParam(name);
      await runner.release();
      base.release();
      return { norms, b };
    };
    const half = await train(f.half, f.tensors);
    const same = await train(f.full, f.rounded);
    assert.equal(half.b.dtype, "float32");
    assert.ok(half.norms.every((n) => n > 0 && Number.isFinite(n)));
    assert.ok(maxAbsDiff(half.norms, same.norms) < 1e-5 * Math.max(...same.norms));
    assert.ok(maxAbsDiff(half.b.data as Float32Array, same.b.data as Float32Array) < 1e-6);
    assert.ok(maxAbsDiff(half.b.data as Float32Array, new Float32Array(half.b.data.length)) > 0);
  });
});

Deno.test("float16 base: a float32 value for a float16 parameter is refused with the fix", async () => {
  const f = await fixture();
  const config = trainStepConfig(f.half);
  const wrong = Object.fromEntries(
    allParams(f.half).map((
      p,
    ) => [
      p.name,
      paramHostTensor(
        { ...p, dtype: undefined },
        new Float32Array(p.shape.reduce((a, b) => a * b, 1)),
      ),
    ]),
  );
  await withCpu(async (rt) => {
    await assert.rejects(
      () => openTrainStep({ runtime: rt, config, initial: wrong }),
      (e) => e instanceof TrainStepError && /is float32, spec float16; convert it/.test(e.message),
    );
    await assert.rejects(
      () => openTrainStep({ runtime: rt, config: { ...config, trainable: "all" }, initial: wrong }),
      (e) => e instanceof TrainStepError && /float16 and trainable/.test(e.message),
    );
  });
});
