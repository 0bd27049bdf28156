import assert from "node:assert/strict";
import { createGenerator, type TokenChooser } from "../../adapters/model/generate.ts";
import { buildLogitsGraph, MODEL_IO } from "../../adapters/model/graphs.ts";
import { decoderSpec } from "../../adapters/model/parameters.ts";
import { openSupervisedTrainer, type SupervisedExample } from "../../adapters/model/supervised.ts";
import { uploadBase } from "../../adapters/model/weights.ts";
import { type BackendName, hostTensor } from "../../adapters/onnx/runtime/mod.ts";
import { backends, testName, withRuntime } from "../onnx-train/backends.ts";
import { maxAbsDiff, tinyModel } from "./helpers.ts";
import { referenceLogits } from "./reference.ts";

const greedy: TokenChooser = (logits) => logits.indexOf(Math.max(...logits));
const model = await tinyModel("Qwen3ForCausalLM");
const spec = decoderSpec(model.config);
const initial = Object.fromEntries(
  [...model.tensors.values()].map((t) => [t.name, hostTensor("float32", t.shape, t.data)]),
);
const examples: SupervisedExample[] = [
  { tokens: [10, 11, 12, 13, 14, 15], lossSpans: [[2, 6]] },
  { tokens: [20, 21, 22, 23], lossSpans: [[1, 4]] },
];

/** Forward logits, greedy tokens and two supervised steps' losses on one backend. */
async function runAll(name: BackendName) {
  const seq = [3, 17, 250, 9, 44];
  return await withRuntime(name, async (rt) => {
    const base = uploadBase(rt, spec, model.tensors);
    const session = await rt.load(buildLogitsGraph(spec).model);
    const out = await session.run({
      ...base.feeds,
      [MODEL_IO.tokens]: hostTensor("int32", [1, 5], seq),
      [MODEL_IO.attentionMask]: hostTensor("float32", [1, 5], [1, 1, 1, 1, 1]),
    });
    const gen = await createGenerator(rt, spec);
    const rows = await gen.generate(base.feeds, {
      prompts: [[1, 2, 3], [4]],
      maxTokens: 4,
      temperature: 0,
      choose: greedy,
    });
    await gen.release();
    await session.release();
    base.release();
    const trainer = await openSupervisedTrainer(rt, spec, initial);
    const losses = [];
    for (let i = 0; i < 2; i++) {
      losses.push(
        (await trainer.step(examples, { lr: 1e-2, weightDecay: 0, maxGradNorm: 10 })).loss,
      );
    }
    await trainer.release();
    return {
      seq,
      logits: out.host[MODEL_IO.logits].data as Float32Array,
      tokens: rows.map((r) => r.tokens),
      losses,
    };
  });
}

for (const { name, skip } of backends) {
  Deno.test({
    name: testName(`${name}: forward, greedy generation and train steps agree with cpu`, skip),
    ignore: skip !== null,
    fn: async () => {
      const got = await runAll(name);
      const vocab = model.config.vocabSize;
      referenceLogits(model.config, model.tensors, got.seq).forEach((row, t) => {
        const diff = maxAbsDiff(got.logits.subarray(t * vocab, (t + 1) * vocab), row);
        assert.ok(diff < 2e-5, `${name} position ${t}: ${diff}`);
      });
      const cpu = name === "cpu" ? got : await runAll("cpu");
      assert.deepEqual(got.tokens, cpu.tokens);
      // Backends sum in different orders: the second loss (after one update) agrees to ~1e-5.
      assert.ok(maxAbsDiff(got.losses, cpu.losses) < 1e-4, `${got.losses} vs ${cpu.losses}`);
      assert.ok(got.losses[1] < got.losses[0]);
    },
  });
}
