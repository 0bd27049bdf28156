import assert from "node:assert/strict";
import { decoderSpec } from "../../adapters/model/parameters.ts";
import {
  openSupervisedTrainer,
  supervisedBatch,
  type SupervisedExample,
} from "../../adapters/model/supervised.ts";
import { hostTensor } from "../../adapters/onnx/runtime/mod.ts";
import { tinyModel, withCpu } from "./helpers.ts";

Deno.test("supervisedBatch right-pads, shifts targets and masks all but the loss spans", () => {
  const b = supervisedBatch([
    { tokens: [1, 2, 3, 4], lossSpans: [[2, 4]] },
    { tokens: [5, 6], lossSpans: [[1, 2]] },
    { tokens: [7, 8, 9, 10], lossSpans: [[1, 2], [3, 4]] },
  ]);
  assert.equal(b.seq, 3);
  assert.deepEqual([...b.tokens], [1, 2, 3, 5, 0, 0, 7, 8, 9]);
  assert.deepEqual([...b.targets], [2, 3, 4, 6, 0, 0, 8, 9, 10]);
  assert.deepEqual([...b.attentionMask], [1, 1, 1, 1, 0, 0, 1, 1, 1]);
  assert.deepEqual([...b.lossMask], [0, 1, 1, 1, 0, 0, 1, 0, 1]);
  assert.throws(() => supervisedBatch([{ tokens: [1, 2], lossSpans: [[2, 2]] }]), /loss spans/);
  assert.throws(() => supervisedBatch([{ tokens: [1, 2], lossSpans: [[0, 2]] }]), /loss spans/);
  assert.throws(() => supervisedBatch([{ tokens: [1, 2], lossSpans: [] }]), /loss spans/);
});

Deno.test("supervised steps through the policy train step minimize next-token NLL", async () => {
  const model = await tinyModel("Qwen2ForCausalLM");
  const spec = decoderSpec(model.config);
  const initial = Object.fromEntries(
    [...model.tensors.values()].map((t) => [t.name, hostTensor("float32", t.shape, t.data)]),
  );
  const examples: SupervisedExample[] = [
    { tokens: [10, 11, 12, 13, 14, 15], lossSpans: [[2, 6]] },
    { tokens: [20, 21, 22, 23], lossSpans: [[1, 4]] },
  ];
  await withCpu(async (rt) => {
    const trainer = await openSupervisedTrainer(rt, spec, initial);
    // The step's loss is the mean NLL of the loss tokens at the weights before its update.
    const batch = supervisedBatch(examples);
    const logprobs = await trainer.runner.logprobs(batch, 1);
    const nll = -logprobs.reduce((s, lp, i) => s + lp * batch.lossMask[i], 0) / 7;
    const losses: number[] = [];
    for (let i = 0; i < 25; i++) {
      const m = await trainer.step(examples, { lr: 1e-2, weightDecay: 0, maxGradNorm: 10 });
      assert.equal(m.lossTokens, 7);
      assert.ok(!m.skipped);
      losses.push(m.loss);
    }
    // A random 272-token model starts near ln(272) = 5.6 nats; memorizing 7 tokens takes it low.
    assert.ok(losses[0] > 4, `first loss ${losses[0]}`);
    assert.ok(Math.abs(losses[0] - nll) < 1e-5, `first loss ${losses[0]}, NLL ${nll}`);
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
