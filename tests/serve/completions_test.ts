/**
 * `deno task serve` over HTTP against the in-process generator: the real server process on
 * 127.0.0.1 serving the embedded model, each answer checked against the same generation made
 * here from the server's documented contract (keyed draws per choice, logprobs at the request's
 * temperature): identical token ids and logprobs; n > 1, stop strings, top logprobs, echo, the
 * chat template, server-sent events, and 8 concurrent clients batched together giving what each
 * gets alone. Which request sends the model what training sent an agent (docs/SCALE-OUT.md, "What
 * training sampled"): chat completions with the agent's filled prompt, or completions with its ids.
 */
import assert from "node:assert/strict";
import { decoderSpec, loadEmbeddedModel } from "../../adapters/model/mod.ts";
import { PRESET_PROMPTS } from "../../engine/config/mod.ts";
import { turnPrompt } from "../../engine/trainer/rollout/speaker.ts";
import { renderPrompt } from "../../engine/workflows/mod.ts";
import { inProcess } from "./in-process.ts";
import { sseEvents, startServe } from "./server-process.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

const embedded = await loadEmbeddedModel();
const tokenizer = embedded.tokenizer!;
const PROMPT = "Question: 12+7=?\nAnswer:";

Deno.test("serve answers like the in-process generator", async (t) => {
  await using server = await startServe("--model", "embedded");
  const complete = async (body: Json) => {
    const r = await server.json("/v1/completions", body);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  };

  await t.step("GET /v1/models lists the base with its context", async () => {
    const models = await (await server.get("/v1/models")).json();
    assert.equal(models.object, "list");
    assert.deepEqual(models.data.map((m: Json) => [m.id, m.max_model_len]), [["embedded", 1024]]);
  });

  await t.step("a seeded completion: the same token ids and logprobs as in-process", async () => {
    const ids = tokenizer.encode(PROMPT);
    const body = { prompt: PROMPT, max_tokens: 24, temperature: 0.8, top_p: 0.95, seed: 1234 };
    const res = await complete({ ...body, logprobs: 0 });
    const [row] = await inProcess({
      prompts: [ids],
      samples: [0],
      seed: 1234,
      maxTokens: 24,
      temperature: 0.8,
      topP: 0.95,
    });
    const choice = res.choices[0];
    assert.deepEqual(choice.prompt_token_ids, ids);
    assert.deepEqual(choice.token_ids, row.tokens);
    assert.deepEqual(choice.logprobs.token_logprobs, row.logprobs);
    assert.equal(choice.finish_reason, row.finishReason === "length" ? "length" : "stop");
    assert.equal(choice.text, tokenizer.decode(row.tokens, { skipSpecialTokens: true }));
    assert.deepEqual(res.usage, {
      prompt_tokens: ids.length,
      completion_tokens: row.tokens.length,
      total_tokens: ids.length + row.tokens.length,
    });
    // The prompt as token ids, and the same request again: the same answer.
    const byIds = await complete({ ...body, prompt: ids, logprobs: 0 });
    assert.deepEqual(byIds.choices[0].token_ids, row.tokens);
    assert.deepEqual((await complete({ ...body, logprobs: 0 })).choices, res.choices);
  });

  await t.step("n = 4: choice j samples with draws keyed by j, as in-process", async () => {
    const ids = tokenizer.encode(PROMPT);
    const res = await complete({
      prompt: ids,
      n: 4,
      max_tokens: 16,
      temperature: 1,
      seed: 5,
      logprobs: 0,
    });
    const rows = await inProcess({
      prompts: [ids, ids, ids, ids],
      samples: [0, 1, 2, 3],
      seed: 5,
      maxTokens: 16,
      temperature: 1,
      topP: 1,
    });
    assert.deepEqual(res.choices.map((c: Json) => c.index), [0, 1, 2, 3]);
    assert.deepEqual(res.choices.map((c: Json) => c.token_ids), rows.map((r) => r.tokens));
    assert.deepEqual(
      res.choices.map((c: Json) => c.logprobs.token_logprobs),
      rows.map((r) => r.logprobs),
    );
    assert.ok(new Set(rows.map((r) => r.tokens.join(","))).size > 1, "the 4 samples differ");
    // Two prompts at n = 2: choice index = prompt * n + sample.
    const two = await complete({ prompt: [PROMPT, "2+2="], n: 2, max_tokens: 4, seed: 5 });
    assert.deepEqual(two.choices.map((c: Json) => c.index), [0, 1, 2, 3]);
    assert.deepEqual(two.choices[2].prompt_token_ids, tokenizer.encode("2+2="));
  });

  await t.step(
    "a stop string ends the text before it; the ids end at the token completing it",
    async () => {
      const body = { prompt: PROMPT, max_tokens: 32, temperature: 1, seed: 77 };
      const full = (await complete(body)).choices[0];
      assert.ok(full.text.length >= 8, `a long enough text: ${JSON.stringify(full.text)}`);
      // A stop string whose first occurrence is in the middle of the text.
      let at = 4;
      while (full.text.indexOf(full.text.slice(at, at + 2)) !== at) at++;
      const stop = full.text.slice(at, at + 2);
      const cut = (await complete({ ...body, stop: [stop, "never-seen-stop"] })).choices[0];
      assert.equal(cut.text, full.text.slice(0, at));
      assert.equal(cut.finish_reason, "stop");
      assert.equal(cut.stop_reason, stop);
      assert.deepEqual(cut.token_ids, full.token_ids.slice(0, cut.token_ids.length));
      const through = tokenizer.decode(cut.token_ids, { skipSpecialTokens: true });
      const before = tokenizer.decode(cut.token_ids.slice(0, -1), { skipSpecialTokens: true });
      assert.ok(through.includes(stop) && !before.includes(stop), "the last id completes the stop");
    },
  );

  await t.step(
    "logprobs = 3: the sampled token's logprob and the 3 best, with offsets",
    async () => {
      const res = await complete({ prompt: PROMPT, max_tokens: 12, seed: 9, logprobs: 3 });
      const lp = res.choices[0].logprobs;
      assert.equal(lp.tokens.length, res.choices[0].token_ids.length);
      lp.top_logprobs.forEach((top: Record<string, number>, i: number) => {
        const values = Object.values(top);
        assert.ok(values.length >= 3 && values.length <= 4, `3 best plus the sampled: ${values}`);
        assert.equal(top[lp.tokens[i]], lp.token_logprobs[i]);
        assert.ok(values.every((v) => v <= 0 && Number.isFinite(v)));
      });
      const text = res.choices[0].text;
      lp.text_offset.forEach((o: number, i: number) => assert.ok(o <= text.length, `offset ${i}`));
      assert.equal(lp.text_offset[0], 0);
    },
  );

  await t.step(
    "echo: the prompt leads the text, its tokens' logprobs lead the logprobs",
    async () => {
      const ids = tokenizer.encode(PROMPT);
      const res = await complete({
        prompt: PROMPT,
        max_tokens: 6,
        seed: 3,
        echo: true,
        logprobs: 1,
      });
      const c = res.choices[0];
      assert.ok(c.text.startsWith(PROMPT));
      assert.equal(c.logprobs.tokens.length, ids.length + c.token_ids.length);
      assert.equal(c.logprobs.token_logprobs[0], null);
      assert.ok(
        c.logprobs.token_logprobs.slice(1).every((v: number) => v <= 0 && Number.isFinite(v)),
      );
      assert.equal(c.logprobs.text_offset[ids.length], PROMPT.length);
      const only = await complete({ prompt: PROMPT, max_tokens: 0, echo: true });
      assert.equal(only.choices[0].text, PROMPT);
      assert.deepEqual(only.choices[0].token_ids, []);
    },
  );

  await t.step(
    "chat: the checkpoint's template renders the prompt; tokens as in-process",
    async () => {
      const messages = [{ role: "user", content: "What is 12+7?" }];
      const ids = tokenizer.encodeChat(messages);
      const r = await server.json("/v1/chat/completions", {
        messages,
        max_tokens: 20,
        seed: 11,
        logprobs: true,
        top_logprobs: 2,
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const [row] = await inProcess({
        prompts: [ids],
        samples: [0],
        seed: 11,
        maxTokens: 20,
        temperature: 1,
        topP: 1,
      });
      assert.deepEqual(r.body.prompt_token_ids, ids);
      const choice = r.body.choices[0];
      assert.deepEqual(choice.token_ids, row.tokens);
      assert.equal(choice.message.role, "assistant");
      assert.equal(
        choice.message.content,
        tokenizer.decode(row.tokens, { skipSpecialTokens: true }),
      );
      assert.deepEqual(choice.logprobs.content.map((e: Json) => e.logprob), row.logprobs);
      assert.ok(choice.logprobs.content.every((e: Json) => e.top_logprobs.length === 2));
    },
  );

  await t.step(
    "what training sent the solver: chat with its filled prompt, or completions with those ids",
    async () => {
      // The refine presets' solver turn on a training question, as the trainer builds it.
      const filled = renderPrompt(PRESET_PROMPTS.solver, { question: "12+7=?", revision: "" });
      const trained = turnPrompt(
        { spec: decoderSpec(embedded.config), tokenizer },
        { prompt: filled },
        12,
      );
      const sampling = { max_tokens: 12, seed: 5, temperature: 1 };
      const chat = await server.json("/v1/chat/completions", {
        messages: [{ role: "user", content: filled }],
        ...sampling,
      });
      assert.equal(chat.status, 200, JSON.stringify(chat.body));
      assert.deepEqual(chat.body.prompt_token_ids, trained);
      const byIds = await complete({ prompt: trained, ...sampling });
      assert.deepEqual(byIds.choices[0].token_ids, chat.body.choices[0].token_ids);
      // A text prompt goes in as it is, without the chat template: not what training sent.
      const raw = await complete({ prompt: filled, ...sampling });
      const text = (ids: number[]) => tokenizer.decode(ids, { skipSpecialTokens: false });
      assert.equal(text(raw.choices[0].prompt_token_ids), "12+7=?");
      assert.equal(text(trained), "<|im_start|>user\n12+7=?<|im_end|>\n<|im_start|>assistant\n");
    },
  );

  await t.step("streaming: SSE chunks add up to the answer, then [DONE]", async () => {
    const body = { prompt: PROMPT, max_tokens: 20, n: 2, seed: 21, logprobs: 1 };
    const whole = await complete(body);
    const res = await server.post("/v1/completions", {
      ...body,
      stream: true,
      stream_options: { include_usage: true },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const events = sseEvents(await res.text());
    assert.equal(events.at(-1), "[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    assert.ok(chunks.every((c) => c.id === chunks[0].id && c.object === "text_completion"));
    const usage = chunks.at(-1).usage;
    assert.deepEqual(usage, whole.usage);
    for (const expected of whole.choices) {
      const mine = chunks.slice(0, -1).map((c) => c.choices[0]).filter((c) =>
        c.index === expected.index
      );
      assert.equal(mine.map((c) => c.text).join(""), expected.text);
      assert.deepEqual(mine.flatMap((c) => c.token_ids), expected.token_ids);
      assert.deepEqual(mine.filter((c) => c.prompt_token_ids).length, 1);
      assert.deepEqual(mine[0].prompt_token_ids, expected.prompt_token_ids);
      assert.deepEqual(
        mine.flatMap((c) => c.logprobs?.token_logprobs ?? []),
        expected.logprobs.token_logprobs,
      );
      assert.deepEqual(mine.map((c) => c.finish_reason).filter((f) => f !== null), [
        expected.finish_reason,
      ]);
      assert.equal(mine.at(-1).finish_reason, expected.finish_reason);
    }
    // A stop string: the streamed pieces never show it, and add up to the cut text.
    const plain = { prompt: PROMPT, max_tokens: 32, temperature: 1, seed: 77 };
    const full = (await complete(plain)).choices[0].text as string;
    let at = 4;
    while (full.indexOf(full.slice(at, at + 3)) !== at) at++;
    const stop = full.slice(at, at + 3);
    const cut = (await complete({ ...plain, stop })).choices[0];
    const pieces = sseEvents(
      await (await server.post("/v1/completions", { ...plain, stop, stream: true })).text(),
    ).slice(0, -1).map((e) => JSON.parse(e).choices[0]);
    assert.equal(pieces.map((p) => p.text).join(""), cut.text);
    assert.ok(pieces.every((p) => !p.text.includes(stop)));
    assert.equal(pieces.at(-1).stop_reason, stop);
    assert.deepEqual(pieces.flatMap((p) => p.token_ids), cut.token_ids);
    const chat = {
      messages: [{ role: "user", content: "Say hi" }],
      max_tokens: 12,
      seed: 4,
      logprobs: true,
      top_logprobs: 1,
    };
    const whole2 = (await server.json("/v1/chat/completions", chat)).body;
    const streamed = sseEvents(
      await (await server.post("/v1/chat/completions", { ...chat, stream: true })).text(),
    );
    assert.equal(streamed.at(-1), "[DONE]");
    const deltas = streamed.slice(0, -1).map((e) => JSON.parse(e));
    assert.ok(deltas.every((d) => d.object === "chat.completion.chunk"));
    assert.deepEqual(deltas[0].choices[0].delta, { role: "assistant", content: "" });
    assert.equal(
      deltas.map((d) => d.choices[0].delta.content ?? "").join(""),
      whole2.choices[0].message.content,
    );
    assert.equal(deltas.at(-1).choices[0].finish_reason, whole2.choices[0].finish_reason);
    assert.deepEqual(
      deltas.flatMap((d) => d.choices[0].logprobs?.content ?? []),
      whole2.choices[0].logprobs.content,
    );
    assert.deepEqual(
      deltas.flatMap((d) => d.choices[0].token_ids ?? []),
      whole2.choices[0].token_ids,
    );
  });

  await t.step("8 concurrent clients share batches and get what each gets alone", async () => {
    const health = async () => await (await server.get("/health")).json();
    const bodies = Array.from({ length: 8 }, (_, i) => ({
      prompt: `Question: ${i * 7}+${i + 3}=?\nAnswer:`.slice(0, 12 + i),
      max_tokens: 16 + i,
      temperature: 1,
      seed: 100 + i,
      logprobs: 0,
    }));
    const before = await health();
    const together = await Promise.all(bodies.map((b) => complete(b)));
    const after = await health();
    assert.equal(after.sequences - before.sequences, 8);
    assert.ok(
      after.batches - before.batches < 8,
      `8 requests ran in ${after.batches - before.batches} batches`,
    );
    let bitEqual = 0;
    let worst = 0;
    for (const [i, b] of bodies.entries()) {
      const alone = await complete(b);
      const [x, y] = [together[i].choices[0], alone.choices[0]];
      assert.deepEqual(x.token_ids, y.token_ids, `client ${i}: same tokens batched and alone`);
      const diffs = x.logprobs.token_logprobs.map((v: number, k: number) =>
        Math.abs(v - y.logprobs.token_logprobs[k])
      );
      worst = Math.max(worst, ...diffs);
      // Another batch shape rounds the matmuls differently, and six layers carry that into the
      // logprobs: up to 1.2e-5 (at a logprob of -1.95) on the embedded model, and up to 6e-5
      // across the rollouts' batch shapes (docs/PERFORMANCE.md); a row mixed up with another
      // would be off by far more.
      assert.ok(Math.max(0, ...diffs) < 1e-4, `client ${i}: logprobs within float32 rounding`);
      if (diffs.every((d: number) => d === 0)) bitEqual++;
    }
    const ran = after.batches - before.batches;
    console.log(
      `  8 clients in ${ran} batch(es); logprobs bit-equal to alone for ${bitEqual}/8, ` +
        `max |delta| ${worst.toExponential(2)}`,
    );
  });

  await t.step(
    "continuous batching: a request joins a running batch and leaves before it drains",
    async () => {
      const health = async () => await (await server.get("/health")).json();
      const before = await health();
      const long = await server.post("/v1/completions", {
        prompt: PROMPT,
        max_tokens: 400,
        ignore_eos: true,
        seed: 8,
        stream: true,
      });
      const reader = long.body!.getReader();
      await reader.read();
      const short = await complete({ prompt: "2+2=", max_tokens: 4, seed: 9, ignore_eos: true });
      const during = await health();
      assert.equal(during.running, 1, "the long sequence still runs after the short one ended");
      assert.equal(short.choices[0].token_ids.length, 4);
      let rest = "";
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        rest += new TextDecoder().decode(r.value);
      }
      assert.ok(rest.endsWith("data: [DONE]\n\n"));
      const after = await health();
      assert.equal(after.batches - before.batches, 1, "both ran in one continuous batch");
      assert.equal(after.sequences - before.sequences, 2);
      // The short request alone gives the same tokens.
      const alone = await complete({ prompt: "2+2=", max_tokens: 4, seed: 9, ignore_eos: true });
      assert.deepEqual(alone.choices[0].token_ids, short.choices[0].token_ids);
    },
  );

  assert.equal(await server.stop(), 0, server.stderr());
});
