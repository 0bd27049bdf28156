import assert from "node:assert/strict";
import { createGenerator, type TokenChooser } from "../../adapters/model/generate.ts";
import { decoderSpec } from "../../adapters/model/parameters.ts";
import { uploadBase } from "../../adapters/model/weights.ts";
import { keyedChooser, maxAbsDiff, tinyModel, withCpu } from "./helpers.ts";

// Rows leaving the decode batch change the batch a row's matmuls run in, so its float32 sums may
// round differently; logprobs are O(1) values, so a few ulps of them sit far below this.
const LOGPROB_TOLERANCE = 1e-5;

Deno.test("finished rows leave the decode batch: same tokens and finish reasons, logprobs to float32 rounding", async () => {
  const model = await tinyModel("Qwen2ForCausalLM");
  const spec = decoderSpec(model.config, null);
  const stop = 3;
  const sampled = keyedChooser(11, { temperature: 0.9, topP: 1 });
  // Row r ends with the stop token at its token r (rows 0..5 leave at different steps, row 6 runs
  // to the length limit); rows 1 and 4 share a prompt, so they share a prefill too.
  const choose: TokenChooser = (logits, row, index) => {
    if (index === row) return stop;
    const t = sampled(logits, row, index);
    return t === stop ? stop + 1 : t;
  };
  const prompts = [[5, 9, 2, 77, 31], [12, 200], [40, 41, 42], [7], [12, 200], [8, 8, 8, 8], [90]];
  await withCpu(async (rt) => {
    const base = uploadBase(rt, spec, model.tensors);
    const gen = await createGenerator(rt, spec);
    const run = (dropFinished: boolean) =>
      gen.generate(base.feeds, {
        prompts,
        maxTokens: 6,
        temperature: 0.9,
        choose,
        stopTokenIds: [stop],
        dropFinished,
      });
    const dropped = await run(true);
    const kept = await run(false);
    assert.deepEqual(dropped.map((r) => r.tokens), kept.map((r) => r.tokens));
    assert.deepEqual(
      dropped.map((r) => r.finishReason),
      [...Array(6).fill("stop-token"), "length"],
    );
    assert.deepEqual(dropped.map((r) => r.tokens.length), [1, 2, 3, 4, 5, 6, 6]);
    dropped.forEach((r, i) =>
      assert.ok(
        maxAbsDiff(r.logprobs, kept[i].logprobs) < LOGPROB_TOLERANCE,
        `row ${i} logprobs`,
      )
    );
    // The same request twice gives the same bits: which rows run depends only on the tokens.
    assert.deepEqual(await run(true), dropped);
    await gen.release();
    base.release();
  });
});
