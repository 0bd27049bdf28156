import assert from "node:assert/strict";
import { buildTrainStep } from "../../adapters/onnx/train-step/graph.ts";
import { openTrainStep, type TrainStepHyper } from "../../adapters/onnx/train-step/runner.ts";
import { IO, type TrainStepConfig } from "../../adapters/onnx/train-step/spec.ts";
import type { DeviceTensor, HostTensor, Runtime } from "../../adapters/onnx/runtime/mod.ts";
import { withRuntime } from "./backends.ts";
import { tinyBatch, tinyParams, tinyPolicy, tinyWeights } from "./tiny-policy.ts";

const sizes = { vocab: 7, dim: 4, hidden: 5, rank: 2 };
const lora = ["lora_a", "lora_b"];
const base = ["embed", "w1", "b1", "w2", "b2"];
const config: TrainStepConfig = {
  policy: tinyPolicy(sizes),
  params: tinyParams(sizes),
  trainable: lora,
};
const hyper: TrainStepHyper = {
  lr: 0.05,
  clipLow: 0.2,
  clipHigh: 0.2,
  klCoef: 0,
  weightDecay: 0,
  maxGradNorm: 1,
  temperature: 1,
};

Deno.test("LoRA graphs take the frozen base as inputs and update only the adapter", () => {
  const fused = buildTrainStep(config, "fused");
  const inputs = fused.graph.inputs.map((v) => v.name);
  const outputs = fused.graph.outputs.map((o) => o.name);
  for (const name of base) {
    assert.ok(inputs.includes(IO.param(name)), `${name} is an input`);
    assert.ok(!outputs.includes(IO.paramNext(name)), `${name} is not updated`);
    assert.ok(!inputs.includes(IO.adamM(name)), `${name} has no Adam state`);
  }
  for (const name of lora) assert.ok(outputs.includes(IO.paramNext(name)));
  assert.equal(fused.graph.initializers.length, 0, "no weights are baked into the model");
  const apply = buildTrainStep(config, "apply").graph.inputs.map((v) => v.name);
  for (const name of base) assert.ok(!apply.includes(IO.param(name)));
});

Deno.test("two adapters on one frozen base feed the same device tensors, uploaded once", async () => {
  await withRuntime("cpu", async (runtime) => {
    const uploads: string[] = [];
    const counting: Runtime = {
      ...runtime,
      upload: (t: HostTensor) => {
        uploads.push(`[${t.dims}]`);
        return runtime.upload(t);
      },
    };
    const weights = tinyWeights(sizes, 5);
    const shared: Record<string, DeviceTensor> = {};
    for (const name of base) shared[name] = counting.upload(weights[name]);
    const baseUploads = uploads.length;
    const agents = [];
    for (const seed of [21, 22]) {
      const own = tinyWeights(sizes, seed);
      agents.push(
        await openTrainStep({
          runtime: counting,
          config,
          initial: { lora_a: own.lora_a, lora_b: own.lora_b },
          frozen: shared,
        }),
      );
    }
    // Per adapter: each LoRA tensor with its two moments, plus the step counter.
    assert.equal(uploads.length - baseUploads, 2 * (lora.length * 3 + 1));
    for (const agent of agents) {
      for (const name of base) assert.equal(agent.frozen[name], shared[name]);
      assert.deepEqual(agent.trainable, lora);
    }
    const before = await Promise.all(agents.map((a) => a.readParam("lora_a")));
    const batch = tinyBatch(sizes, 4, 5, 9);
    for (let i = 0; i < 2; i++) {
      for (const agent of agents) assert.equal((await agent.step(batch, hyper)).skipped, false);
    }
    for (const [i, agent] of agents.entries()) {
      const after = await agent.readParam("lora_a");
      assert.notDeepEqual([...after.data], [...before[i].data], "the adapter trained");
    }
    for (const name of base) {
      assert.deepEqual([...(await shared[name].read()).data], [...weights[name].data]);
    }
    for (const agent of agents) await agent.release();
    for (const name of base) shared[name].dispose();
  });
});
