/**
 * A frozen base as constants of the train-step graphs (openTrainStep's `constantFrozen`): the
 * LoRA step trains as with the base fed, within float32 rounding (onnxruntime prepacks a constant
 * matrix and its kernel adds in another order), repeatably to the bit, and with no base input;
 * constants past the external-data size travel in their own file and give the same numbers as
 * embedded ones, on onnxruntime-node (cpu) and onnxruntime-web (wasm).
 */
import assert from "node:assert/strict";
import { trainStepConfig } from "../../adapters/model/graphs.ts";
import { initLoraAdapter } from "../../adapters/model/init.ts";
import { loraSpec } from "../../adapters/model/lora.ts";
import { baseParams, decoderSpec } from "../../adapters/model/parameters.ts";
import { supervisedBatch } from "../../adapters/model/supervised.ts";
import {
  adapterHostFeeds,
  baseHostFeeds,
  runnerFeeds,
  uploadBase,
} from "../../adapters/model/weights.ts";
import { tensor } from "../../adapters/onnx/ir.ts";
import {
  type HostTensor,
  hostTensor,
  openRuntime,
  type Runtime,
} from "../../adapters/onnx/runtime/mod.ts";
import {
  buildTrainStep,
  IO,
  openTrainStep,
  type TrainStepRunner,
} from "../../adapters/onnx/train-step/mod.ts";
import { plainHyper } from "../onnx-train/tiny-policy.ts";
import { keyedNormal, tinyModel, withCpu } from "./helpers.ts";

const model = await tinyModel("Qwen2ForCausalLM");
const spec = decoderSpec(
  model.config,
  loraSpec({ rank: 2, alpha: 4, targetModules: ["q_proj", "v_proj", "down_proj"] }),
);
const byName = (feeds: Record<string, HostTensor>) =>
  Object.fromEntries(Object.entries(feeds).map(([k, v]) => [k.slice(IO.param("").length), v]));
const lora = byName(adapterHostFeeds(spec, initLoraAdapter(spec, keyedNormal(2), "solver")));
const base = byName(baseHostFeeds(spec, model.tensors));
const hyper = plainHyper(0.05);
const batch = supervisedBatch([
  { tokens: [5, 9, 14, 3, 27, 8], lossSpans: [[2, 6]] },
  { tokens: [11, 2, 40, 7], lossSpans: [[1, 4]] },
]);

/** Three steps; the metrics of each and the LoRA matrices after. */
async function train(runner: TrainStepRunner) {
  const metrics = [];
  for (let step = 0; step < 3; step++) metrics.push(await runner.step(batch, hyper));
  const params: Record<string, Float32Array> = {};
  for (const name of runner.trainable) {
    params[name] = (await runner.readParam(name)).data as Float32Array;
  }
  await runner.release();
  return { metrics, params };
}

Deno.test("a frozen base as graph constants trains as the fed base does, repeatably", async () => {
  await withCpu(async (rt) => {
    const uploaded = uploadBase(rt, spec, model.tensors);
    const config = trainStepConfig(spec);
    const fed = await train(
      await openTrainStep({ runtime: rt, config, initial: lora, frozen: uploaded.tensors }),
    );
    const constantRunner = () =>
      openTrainStep({ runtime: rt, config, initial: { ...lora, ...base }, constantFrozen: true });
    const first = await constantRunner();
    assert.deepEqual(Object.keys(first.frozen), [], "no base tensor is fed");
    assert.throws(() => runnerFeeds(spec, first), /constant of the runner's graphs/);
    const constant = await train(first);
    const again = await train(await constantRunner());

    for (const [i, m] of constant.metrics.entries()) {
      const f = fed.metrics[i];
      assert.ok(Math.abs(m.loss - f.loss) <= 1e-5 * Math.abs(f.loss), `loss ${m.loss} ${f.loss}`);
      assert.ok(
        Math.abs(m.gradNorm - f.gradNorm) <= 1e-4 * f.gradNorm,
        `grad norm ${m.gradNorm} ${f.gradNorm}`,
      );
      assert.deepEqual(again.metrics[i], m, "two runs with constants agree to the bit");
    }
    for (const [name, values] of Object.entries(constant.params)) {
      const scale = Math.max(...fed.params[name].map(Math.abs));
      const worst = Math.max(...values.map((v, i) => Math.abs(v - fed.params[name][i])));
      assert.ok(worst <= 1e-4 * scale + 1e-6, `${name}: ${worst} against ${scale}`);
      assert.deepEqual(again.params[name], values, name);
    }
    uploaded.release();
  });
});

Deno.test("the graphs take no base input, and a trainable parameter cannot be a constant", () => {
  const config = trainStepConfig(spec);
  const values = Object.fromEntries(
    Object.entries(base).map(([name, t]) => [name, tensor(t.dtype, t.dims, t.data)]),
  );
  const step = buildTrainStep(config, "fused", { values });
  const inputs = new Set(step.graph.inputs.map((v) => v.name));
  for (const p of baseParams(model.config)) assert.ok(!inputs.has(IO.param(p.name)), p.name);
  assert.equal(
    step.graph.initializers.filter((i) => i.value.name.slice(IO.param("").length) in values)
      .length,
    baseParams(model.config).length,
  );
  const [trainable] = Object.entries(lora)[0];
  assert.throws(
    () =>
      buildTrainStep(config, "fused", {
        values: { [trainable]: tensor("float32", lora[trainable].dims, lora[trainable].data) },
      }),
    /is trainable in this config/,
  );
});

for (const backend of ["cpu", "wasm"] as const) {
  Deno.test(`constants in an external data file give the embedded ones' numbers (${backend})`, async () => {
    const rt: Runtime = await openRuntime(backend, { threads: 1 });
    try {
      const config = trainStepConfig(spec);
      const values = Object.fromEntries(
        Object.entries(base).map(([name, t]) => [name, tensor(t.dtype, t.dims, t.data)]),
      );
      const embedded = buildTrainStep(config, "logprobs", { values });
      const external = buildTrainStep(config, "logprobs", { values, externalFromBytes: 0 });
      assert.equal(embedded.externalData, undefined);
      assert.ok(external.externalData !== undefined);
      assert.ok(external.model.byteLength < embedded.model.byteLength / 2, "the weights left it");
      const rows = [batch.batch, batch.seq];
      const feeds = {
        ...Object.fromEntries(Object.entries(lora).map(([k, v]) => [IO.param(k), v])),
        [IO.tokens]: hostTensor("int32", rows, batch.tokens),
        [IO.targets]: hostTensor("int32", rows, batch.targets),
        [IO.attentionMask]: hostTensor("float32", rows, batch.attentionMask),
        [IO.temperature]: hostTensor("float32", [], [1]),
      };
      const logprobs = async (model: Uint8Array, externalData = external.externalData) => {
        const session = await rt.load(model, externalData ? { externalData } : {});
        const out = await session.run(feeds);
        await session.release();
        return out.host[IO.logprobs].data as Float32Array;
      };
      assert.deepEqual(await logprobs(external.model), await logprobs(embedded.model, undefined));
    } finally {
      await rt.close();
    }
  });
}
