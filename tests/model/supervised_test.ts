import assert from "node:assert/strict";
import { decoderSpec } from "../../adapters/model/parameters.ts";
import { openSupervisedTrainer, supervisedBatch } from "../../adapters/model/supervised.ts";
import { hostTensor } from "../../adapters/onnx/runtime/mod.ts";
import { tinyModel, withCpu } from "./helpers.ts";

Deno.test("supervisedBatch right-pads, shifts targets and masks the prompt", () => {
  const b = supervisedBatch([{ tokens: [1, 2, 3, 4], lossFrom: 2 }, {
    tokens: [5, 6],
    lossFrom: 1,
  }]);
  assert.equal(b.seq, 3);
  assert.deepEqual([...b.tokens], [1, 2, 3, 5, 0, 0]);
  assert.deepEqual([...b.targets], [2, 3, 4, 6, 0, 0]);
  assert.deepEqual([...b.attentionMask], [1, 1, 1, 1, 0, 0]);
  assert.deepEqual([...b.lossMask], [0, 1, 1, 1, 0, 0]);
  assert.throws(() => supervisedBatch([{ tokens: [1, 2], lossFrom: 2 }]), /lossFrom/);
});

Deno.test("supervised steps through the policy train step minimize next-token NLL", async () => {
  const model = await tinyModel("Qwen2ForCausalLM");
  const spec = decoderSpec(model.config);
  const initial = Object.fromEntries(
    [...model.tensors.values()].map((t) => [t.name, hostTensor("float32", t.shape, t.data)]),
  );
  const examples = [
    { tokens: [10, 11, 12, 13, 14, 15], lossFrom: 2 },
    { tokens: [20, 21, 22, 23], lossFrom: 1 },
  ];
  await withCpu(async (rt) => {
    const trainer = await openSupervisedTrainer(rt, spec, initial);
    const losses: number[] = [];
    for (let i = 0; i < 25; i++) {
      const m = await trainer.step(examples, { lr: 1e-2, weightDecay: 0, maxGradNorm: 10 });
      assert.equal(m.lossTokens, 7);
      assert.ok(!m.skipped);
      losses.push(m.loss);
    }
    // A random 272-token model starts near ln(272) = 5.6 nats; memorizing 7 tokens takes it low.
    assert.ok(losses[0] > 4, `first loss ${losses[0]}`);
    assert.ok(losses.at(-1)! < 0.5, `last loss ${losses.at(-1)}`);

    // Replaying the same steps from the same start gives bit-identical parameters.
    const replay = await openSupervisedTrainer(rt, spec, initial);
    for (let i = 0; i < 25; i++) {
      await replay.step(examples, { lr: 1e-2, weightDecay: 0, maxGradNorm: 10 });
    }
    for (const name of trainer.runner.trainable) {
      const a = await trainer.runner.readParam(name);
      const b = await replay.runner.readParam(name);
      assert.deepEqual(a.data, b.data, name);
    }
    await replay.release();
    await trainer.release();
  });
});
