import assert from "node:assert/strict";
import {
  createGenerator,
  type GeneratedRow,
  type Generator,
  type TokenChooser,
} from "../../adapters/model/generate.ts";
import { lengthBuckets } from "../../adapters/model/continuous-batch.ts";
import { ModelError } from "../../adapters/model/errors.ts";
import { decoderSpec } from "../../adapters/model/parameters.ts";
import { type ParamFeeds, uploadBase } from "../../adapters/model/weights.ts";
import { FUSABLE_HEADS } from "./backend-trace.ts";
import { keyedChooser, maxAbsDiff, tinyModel, withCpu } from "./helpers.ts";

// Rows leaving the decode batch change the batch a row's matmuls run in, so its float32 sums may
// round differently; logprobs are O(1) values, so a few ulps of them sit far below this.
const LOGPROB_TOLERANCE = 1e-5;

// The KV cache in device tensors grown by the decode graph, and in host memory grown in place.
const CACHES = ["host", "device"] as const;

Deno.test("prompts prefill in buckets of like length, longest first, submission order within a length", () => {
  const lengths = [120, 300, 131, 310, 240, 302, 131, 1];
  const prompts = lengths.map((n) => Array.from({ length: n }, (_, i) => i % 7));
  assert.deepEqual(lengthBuckets(prompts), [[3, 5, 1, 4], [2, 6, 0], [7]]);
  assert.deepEqual(lengthBuckets([]), []);
});

Deno.test("host and device KV caches give the same tokens, logprobs to float32 rounding, through joins and leaves", async () => {
  const model = await tinyModel("Qwen2ForCausalLM");
  const spec = decoderSpec(model.config, null);
  const stop = 3;
  const prompts = [[5, 9, 2, 77, 31], [12, 200], [40, 41, 42], [7], [12, 200], [8, 8, 8, 8], [90]];
  await withCpu(async (rt) => {
    const base = uploadBase(rt, spec, model.tensors);
    const rows: GeneratedRow[][] = [];
    for (const cache of CACHES) {
      const gen = await createGenerator(rt, spec, { cache });
      const batch = gen.openBatch(base.feeds, { maxRows: 4 });
      // Rows end at different tokens (row r at its token r + 1), so rows leave while queued ones
      // join: the cache is spliced both ways.
      const sequences = prompts.map((prompt, r) =>
        batch.submit({
          prompt,
          maxTokens: 8,
          temperature: 0.9,
          stopTokenIds: [stop],
          choose: (l, i) => i === r + 1 ? stop : sampler(r)(l, i) % 250 + 4,
        })
      );
      while (batch.running + batch.queued > 0) await batch.step();
      rows.push(await Promise.all(sequences.map((s) => s.result)));
      await batch.close();
      await gen.release();
    }
    const [host, device] = rows;
    assert.deepEqual(host.map((r) => r.tokens), device.map((r) => r.tokens));
    assert.deepEqual(host.map((r) => r.tokens.length), [2, 3, 4, 5, 6, 7, 8]);
    host.forEach((r, i) =>
      assert.ok(maxAbsDiff(r.logprobs, device[i].logprobs) < LOGPROB_TOLERANCE, `row ${i}`)
    );
    base.release();
  });
});

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

/** Sequence `key`'s keyed sampler, as the engine keys draws by episode and turn. */
const sampler = (key: number) => {
  const sampled = keyedChooser(23, { temperature: 0.8, topP: 1 });
  return (logits: Float32Array, index: number) => sampled(logits, key, index);
};

/** What `prompt` gives generated alone (a batch of one row). */
async function alone(gen: Generator, params: ParamFeeds, prompt: number[], key: number) {
  const [row] = await gen.generate(params, {
    prompts: [prompt],
    maxTokens: 7,
    temperature: 0.8,
    choose: (l, _row, i) => sampler(key)(l, i),
  });
  return row;
}

function assertSameRow(got: GeneratedRow, want: GeneratedRow, what: string) {
  assert.deepEqual(got.tokens, want.tokens, `${what} tokens`);
  assert.equal(got.finishReason, want.finishReason, `${what} finish reason`);
  assert.ok(maxAbsDiff(got.logprobs, want.logprobs) < LOGPROB_TOLERANCE, `${what} logprobs`);
}

// The device cache also with the decode step's attention as one GroupQueryAttention node.
const JOIN_CASES = [
  { cache: "host", fused: [] },
  { cache: "device", fused: [] },
  { cache: "device", fused: ["attention"] },
] as const;

for (const { cache, fused } of JOIN_CASES) {
  const what = `${cache} cache${fused.length > 0 ? `, ${fused.join(", ")} fused` : ""}`;
  Deno.test(`sequences joining a running batch mid-decode, shorter and longer than it, give the tokens they give alone (${what})`, async () => {
    const model = await tinyModel("Qwen2ForCausalLM", FUSABLE_HEADS);
    const spec = decoderSpec(model.config, null, { fused: [...fused] });
    await withCpu(async (rt) => {
      const base = uploadBase(rt, spec, model.tensors);
      const gen = await createGenerator(rt, spec, { cache });
      const prompts = [
        [5, 9, 2, 77, 31, 6], // running from the start
        [12, 200], // joins after 2 steps: shorter than the batch's past (padded to it)
        [40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51], // joins after 2 steps: longer (pads the batch)
        [12, 200], // the same prompt as row 1 in the same admission: one shared prefill
        [7], // joins after 4 steps, alone among newcomers
      ];
      const batch = gen.openBatch(base.feeds);
      const submit = (r: number) =>
        batch.submit({ prompt: prompts[r], maxTokens: 7, temperature: 0.8, choose: sampler(r) });
      const sequences = [submit(0)];
      const widths: number[] = [];
      for (let step = 0; batch.running + batch.queued > 0 || step < 5; step++) {
        if (step === 2) sequences.push(submit(1), submit(2), submit(3));
        if (step === 4) sequences.push(submit(4));
        await batch.step();
        widths.push(batch.width);
      }
      // Row 0 has 6 + 2 positions when the 12-token prompt joins: the batch is padded to 12, then
      // grows by one per decode.
      assert.deepEqual(widths.slice(0, 3), [6 + 1, 6 + 2, 12 + 1]);
      for (const [r, s] of sequences.entries()) {
        assertSameRow(await s.result, await alone(gen, base.feeds, prompts[r], r), `sequence ${r}`);
      }
      await batch.close();
      await gen.release();
      base.release();
    });
  });
}

for (const cache of CACHES) {
  Deno.test(`when the longest rows leave, the cache drops the columns that are padding for every row left (${cache} cache)`, async () => {
    const model = await tinyModel("Qwen2ForCausalLM");
    const spec = decoderSpec(model.config, null);
    await withCpu(async (rt) => {
      const base = uploadBase(rt, spec, model.tensors);
      const gen = await createGenerator(rt, spec, { cache });
      const long = Array.from({ length: 30 }, (_, i) => (i * 11) % 250);
      const prompts = [long, [3, 4], [8, 9, 10]];
      const stop = 250;
      const batch = gen.openBatch(base.feeds);
      const sequences = prompts.map((prompt, r) =>
        batch.submit({
          prompt,
          maxTokens: 6,
          temperature: 0.8,
          stopTokenIds: [stop],
          // The long row ends at its second token, the others run to the length limit.
          choose: (l, i) => r === 0 && i === 1 ? stop : sampler(r)(l, i) % stop,
        })
      );
      const widths: number[] = [];
      while (batch.running + batch.queued > 0) {
        await batch.step();
        widths.push(batch.width);
      }
      // Step 1 decodes the first tokens at 30 + 1 positions; the long row then leaves, and the cache
      // keeps only the 3-token row's prompt and fed token (the decode adds one more).
      assert.deepEqual(widths.slice(0, 3), [31, 3 + 1 + 1, 3 + 2 + 1]);
      assert.deepEqual((await sequences[0].result).tokens.length, 2);
      for (const r of [1, 2]) {
        const want = await gen.generate(base.feeds, {
          prompts: [prompts[r]],
          maxTokens: 6,
          temperature: 0.8,
          choose: (l, _row, i) => sampler(r)(l, i) % stop,
        });
        assertSameRow(await sequences[r].result, want[0], `sequence ${r}`);
      }
      await batch.close();
      await gen.release();
      base.release();
    });
  });
}

Deno.test("per-token callbacks stream each token as chosen; a throwing callback or an abort ends only its own sequence", async () => {
  const model = await tinyModel("Qwen2ForCausalLM");
  const spec = decoderSpec(model.config, null);
  await withCpu(async (rt) => {
    const base = uploadBase(rt, spec, model.tensors);
    const gen = await createGenerator(rt, spec);
    const batch = gen.openBatch(base.feeds, { stepping: "auto" });
    const streamed: { token: number; logprob: number; index: number }[] = [];
    const abort = new AbortController();
    const request = (r: number) => ({
      prompt: [10 + r, 20 + r],
      maxTokens: 7,
      temperature: 0.8,
      choose: sampler(r),
    });
    const streaming = batch.submit({
      ...request(0),
      onToken: (token, logprob, index) => streamed.push({ token, logprob, index }),
    });
    const throwing = batch.submit({
      ...request(1),
      onToken: (_t, _l, index) => {
        if (index === 2) throw new Error("client went away");
      },
    });
    const aborted = batch.submit({
      ...request(2),
      onToken: (_t, _l, index) => index === 1 && abort.abort(new Error("cancelled")),
      signal: abort.signal,
    });
    const row = await streaming.result;
    assert.deepEqual(streamed.map((s) => s.token), row.tokens);
    assert.deepEqual(streamed.map((s) => s.logprob), row.logprobs);
    assert.deepEqual(streamed.map((s) => s.index), row.tokens.map((_, i) => i));
    assertSameRow(row, await alone(gen, base.feeds, request(0).prompt, 0), "streamed");
    await assert.rejects(throwing.result, /client went away/);
    await assert.rejects(aborted.result, /cancelled/);
    // Auto stepping admits whatever arrives later too.
    const late = await batch.submit(request(3)).result;
    assertSameRow(late, await alone(gen, base.feeds, request(3).prompt, 3), "late");
    await batch.close();
    assert.throws(
      () => batch.submit(request(4)),
      (err: Error) => err instanceof ModelError && /closed/.test(err.message),
    );
    await gen.release();
    base.release();
  });
});

Deno.test("doubling admission: queued sequences join once they are as many as the running rows", async () => {
  const model = await tinyModel("Qwen2ForCausalLM");
  const spec = decoderSpec(model.config, null);
  await withCpu(async (rt) => {
    const base = uploadBase(rt, spec, model.tensors);
    const gen = await createGenerator(rt, spec);
    const batch = gen.openBatch(base.feeds, { admission: "doubling" });
    const prompt = (r: number) => [30 + r, 40 + r, 50 + r];
    const submit = (r: number) =>
      batch.submit({ prompt: prompt(r), maxTokens: 7, temperature: 0.8, choose: sampler(r) });
    const sequences = [submit(0), submit(1)];
    await batch.step(); // nothing ran: both join
    assert.deepEqual([batch.running, batch.queued], [2, 0]);
    sequences.push(submit(2));
    await batch.step(); // 1 queued < 2 running: it waits
    assert.deepEqual([batch.running, batch.queued], [2, 1]);
    sequences.push(submit(3));
    await batch.step(); // 2 queued >= 2 running: both join
    assert.deepEqual([batch.running, batch.queued], [4, 0]);
    while (batch.running + batch.queued > 0) await batch.step();
    // With the batch capped, as many as are running must fit: a full batch waits to be half empty.
    const capped = gen.openBatch(base.feeds, { admission: "doubling", maxRows: 4 });
    const long = (r: number) =>
      capped.submit({ prompt: prompt(r), maxTokens: 6 + r, temperature: 0.8, choose: sampler(r) });
    [0, 1, 2].forEach(long);
    await capped.step(); // 3 join the empty batch; each has 2 tokens after the step
    long(3);
    long(4);
    const counts: number[][] = [];
    for (let step = 2; step <= 6; step++) {
      await capped.step();
      counts.push([capped.running, capped.queued]);
    }
    // Steps 2-5: room for 1 < 3 running, both wait (row 0 ends at step 5, its 6th token); step 6:
    // room for 2 >= 2 running, both join (and row 1 ends).
    assert.deepEqual(counts, [[3, 2], [3, 2], [3, 2], [2, 2], [3, 0]]);
    await capped.close();
    for (const [r, s] of sequences.entries()) {
      assertSameRow(await s.result, await alone(gen, base.feeds, prompt(r), r), `sequence ${r}`);
    }
    await batch.close();
    await gen.release();
    base.release();
  });
});

Deno.test("when every running row is aborted as newcomers arrive, the newcomers start a fresh cache", async () => {
  const model = await tinyModel("Qwen2ForCausalLM");
  const spec = decoderSpec(model.config, null);
  await withCpu(async (rt) => {
    const base = uploadBase(rt, spec, model.tensors);
    const gen = await createGenerator(rt, spec);
    const batch = gen.openBatch(base.feeds);
    const abort = new AbortController();
    const request = (r: number) => ({
      prompt: [60 + r, 61, 62, 63, 64].slice(0, 5 - r),
      maxTokens: 7,
      temperature: 0.8,
      choose: sampler(r),
    });
    const aborted = batch.submit({ ...request(0), signal: abort.signal });
    await batch.step();
    await batch.step();
    abort.abort(new Error("gone"));
    const newcomer = batch.submit(request(1));
    const ended = await batch.step();
    assert.deepEqual(ended.map((o) => [o.kind, o.sequence.id]), [["failed", 0]]);
    await assert.rejects(aborted.result, /gone/);
    assert.equal(batch.width, request(1).prompt.length + 1);
    while (batch.running + batch.queued > 0) await batch.step();
    assertSameRow(
      await newcomer.result,
      await alone(gen, base.feeds, request(1).prompt, 1),
      "newcomer",
    );
    await batch.close();
    await gen.release();
    base.release();
  });
});
