import assert from "node:assert/strict";
import { EMBEDDED_TOKENIZER_DIR, loadTokenizer } from "../../adapters/hf/mod.ts";
import { createGenerator, type TokenChooser } from "../../adapters/model/generate.ts";
import { decoderSpec } from "../../adapters/model/parameters.ts";
import { uploadBase } from "../../adapters/model/weights.ts";
import { keyedChooser, tinyModel, withCpu } from "./helpers.ts";

Deno.test("generation stops at stop tokens, stop strings and max tokens, per row", async () => {
  const model = await tinyModel("Qwen2ForCausalLM");
  const spec = decoderSpec(model.config);
  const tokenizer = await loadTokenizer(EMBEDDED_TOKENIZER_DIR.pathname);
  const imEnd = tokenizer.tokenToId("<|im_end|>")!;
  const script = [
    [65, 66, imEnd, 67, 68, 69],
    [...tokenizer.encode("ab\n\ncd", { addSpecialTokens: false })],
    [70, 71, 72, 73, 74, 75],
  ];
  // A policy that plays a fixed script: the test controls which token comes when.
  const choose: TokenChooser = (_logits, row, index) => script[row][index];
  await withCpu(async (rt) => {
    const base = uploadBase(rt, spec, model.tensors);
    const gen = await createGenerator(rt, spec);
    const rows = await gen.generate(base.feeds, {
      prompts: [[1, 2], [3], [4, 5, 6]],
      maxTokens: 5,
      temperature: 1,
      choose,
      stopTokenIds: [imEnd],
      stop: { strings: ["\n\n"], decode: (ids) => tokenizer.decode(ids) },
    });
    assert.deepEqual(rows.map((r) => r.finishReason), ["stop-token", "stop-string", "length"]);
    assert.deepEqual(rows[0].tokens, [65, 66, imEnd]);
    assert.equal(tokenizer.decode(rows[1].tokens), "ab\n\n");
    assert.deepEqual(rows[2].tokens, [70, 71, 72, 73, 74]);
    for (const r of rows) {
      assert.equal(r.logprobs.length, r.tokens.length);
      assert.ok(r.logprobs.every((lp) => Number.isFinite(lp) && lp < 0));
    }
    await gen.release();
    base.release();
  });
});

Deno.test("temperature 0 picks the argmax at every step", async () => {
  const model = await tinyModel("LlamaForCausalLM", { tie_word_embeddings: true });
  const spec = decoderSpec(model.config);
  const greedy = keyedChooser(1, { temperature: 0, topP: 1 });
  const argmaxOk: boolean[] = [];
  const choose: TokenChooser = (logits, row, index) => {
    const t = greedy(logits, row, index);
    argmaxOk.push(logits.every((v) => v <= logits[t]));
    return t;
  };
  await withCpu(async (rt) => {
    const base = uploadBase(rt, spec, model.tensors);
    const gen = await createGenerator(rt, spec);
    const rows = await gen.generate(base.feeds, {
      prompts: [[9, 8, 7], [6]],
      maxTokens: 6,
      temperature: 0,
      choose,
    });
    assert.equal(argmaxOk.length, 12);
    assert.ok(argmaxOk.every(Boolean));
    assert.ok(rows.every((r) => r.tokens.length === 6));
    await gen.release();
    base.release();
  });
});
