/**
 * Where LoRA dropout lives in the graphs: one mask input per adapted module in the graphs that
 * train, none anywhere else, and none at all when the rate is 0 (the graphs are then those of a
 * dropout-free adapter, byte for byte).
 */
import assert from "node:assert/strict";
import {
  buildDecodeGraph,
  buildLogitsGraph,
  buildLogprobGraph,
  buildPrefillGraph,
  loraDropoutMasks,
  trainStepConfig,
} from "../../adapters/model/graphs.ts";
import { loraAdapter, loraSpec } from "../../adapters/model/lora.ts";
import { decoderSpec } from "../../adapters/model/parameters.ts";
import { ModelError } from "../../adapters/model/errors.ts";
import { buildTrainStep, type TrainStepKind } from "../../adapters/onnx/train-step/graph.ts";
import { IO } from "../../adapters/onnx/train-step/spec.ts";
import { tinyModel } from "./helpers.ts";

const targets = ["q_proj", "down_proj"];
const model = await tinyModel("Qwen2ForCausalLM");
const withRate = (dropout: number) =>
  decoderSpec(model.config, loraSpec({ rank: 2, alpha: 4, targetModules: targets, dropout }));

Deno.test("rollout, evaluation and logprob graphs are the same bytes with and without LoRA dropout", () => {
  const [dropped, plain] = [withRate(0.1), withRate(0)];
  for (const build of [buildPrefillGraph, buildDecodeGraph, buildLogitsGraph, buildLogprobGraph]) {
    assert.deepEqual(build(dropped).model, build(plain).model, build.name);
  }
  const logprobs = (spec: typeof plain) =>
    buildTrainStep({ ...trainStepConfig(spec) }, "logprobs").model;
  assert.deepEqual(logprobs(dropped), logprobs(plain), "the train step's logprobs graph");
});

Deno.test("the graphs that train take one [batch, seq, in] mask per adapted module; rate 0 takes none", () => {
  const spec = withRate(0.1);
  const masks = loraDropoutMasks(spec);
  assert.deepEqual(masks.map((m) => [m.name.split(".").at(-1), m.width]), [
    ["q_proj", 16],
    ["down_proj", 40],
    ["q_proj", 16],
    ["down_proj", 40],
  ]);
  for (const kind of ["fused", "accumulate", "gradient-norm"] as TrainStepKind[]) {
    const inputs = buildTrainStep({ ...trainStepConfig(spec) }, kind).graph.inputs;
    for (const m of masks) {
      const input = inputs.find((v) => v.name === IO.dropoutMask(m.name));
      assert.deepEqual(input?.shape, ["batch", "seq", m.width], `${kind} ${m.name}`);
    }
  }
  assert.deepEqual(loraDropoutMasks(withRate(0)), []);
  const plain = buildTrainStep({ ...trainStepConfig(withRate(0)) }, "fused").graph.inputs;
  assert.ok(!plain.some((v) => v.name.startsWith("dropout_mask:")), "no mask input at rate 0");
});

Deno.test("the rate is validated and recorded in the PEFT adapter config", () => {
  for (const bad of [-0.1, 1, NaN]) {
    assert.throws(
      () => loraSpec({ rank: 2, alpha: 4, targetModules: targets, dropout: bad }),
      ModelError,
      `dropout ${bad}`,
    );
  }
  const spec = withRate(0.05);
  const adapter = loraAdapter(model.config, spec.lora!, (t) => ({
    a: new Float32Array(2 * t.inFeatures),
    b: new Float32Array(t.outFeatures * 2),
  }));
  assert.equal(adapter.config.dropout, 0.05);
});
