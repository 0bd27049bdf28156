/**
 * LoRA adapters at run time, end to end: a real one-step training run (the CLI) whose solver
 * trains a LoRA adapter, exported with `deno task export-model --format peft`, loaded into a
 * running `deno task serve` with vLLM's `/v1/load_lora_adapter`, picked by `model`: its answers
 * equal the same adapter applied in-process (ids and logprobs) and differ from the base's (the
 * prompt's own logprobs under echo show the logits moved), on completions and chat alike; unloaded,
 * it is gone.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadEmbeddedModel } from "../../adapters/model/mod.ts";
import { trainRun } from "../evaluation/trained-run.ts";
import { runCli } from "../support/run-cli.ts";
import { inProcess } from "./in-process.ts";
import { startServe } from "./server-process.ts";

const tokenizer = (await loadEmbeddedModel()).tokenizer!;
const PROMPT = "Question: 3+4=?\nAnswer:";

Deno.test("an exported adapter loads, serves like in-process, differs from the base, unloads", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-serve-lora-" });
  try {
    const store = join(tmp, "events.sqlite");
    await trainRun(tmp, store, "lora-run");
    const adapterDir = join(tmp, "adapters", "solver");
    const exported = await runCli(
      "engine/cli/export-model.ts",
      "lora-run",
      "--worker-group",
      "solver",
      "--out",
      adapterDir,
      "--format",
      "peft",
      "--store",
      store,
    );
    assert.equal(exported.code, 0, exported.stderr);

    await using server = await startServe(
      "--model",
      "embedded",
      "--lora-dir",
      join(tmp, "adapters"),
    );
    const loaded = await server.post("/v1/load_lora_adapter", {
      lora_name: "solver-v1",
      lora_path: adapterDir,
    });
    assert.equal(loaded.status, 200);
    assert.equal(await loaded.text(), "Success: LoRA adapter 'solver-v1' added successfully.");
    const models = await (await server.get("/v1/models")).json();
    assert.deepEqual(
      models.data.map((m: { id: string; parent: string | null }) => [m.id, m.parent]),
      [["embedded", null], ["solver-v1", "embedded"]],
    );

    const ids = tokenizer.encode(PROMPT);
    const body = { prompt: PROMPT, max_tokens: 16, temperature: 1, seed: 31, logprobs: 0 };
    const adapted = await server.json("/v1/completions", { ...body, model: "solver-v1" });
    assert.equal(adapted.status, 200, JSON.stringify(adapted.body));
    assert.equal(adapted.body.model, "solver-v1");
    const [row] = await inProcess({
      prompts: [ids],
      samples: [0],
      seed: 31,
      maxTokens: 16,
      temperature: 1,
      topP: 1,
      adapterDir,
    });
    assert.deepEqual(adapted.body.choices[0].token_ids, row.tokens);
    assert.deepEqual(adapted.body.choices[0].logprobs.token_logprobs, row.logprobs);

    // SGLang's way of naming it: base:adapter.
    const sglang = await server.json("/v1/completions", { ...body, model: "embedded:solver-v1" });
    assert.deepEqual(sglang.body.choices[0].token_ids, row.tokens);

    // The prompt's own logprobs (echo) under the adapter and under the base: the logits moved.
    const echo = { prompt: PROMPT, max_tokens: 1, seed: 31, echo: true, logprobs: 0 };
    const [onAdapter, onBase] = await Promise.all([
      server.json("/v1/completions", { ...echo, model: "solver-v1" }),
      server.json("/v1/completions", { ...echo, model: "embedded" }),
    ]);
    const promptLogprobs = (r: typeof onBase) =>
      (r.body.choices[0].logprobs.token_logprobs as (number | null)[]).slice(1, ids.length);
    const a = promptLogprobs(onAdapter);
    const b = promptLogprobs(onBase);
    assert.equal(a.length, ids.length - 1);
    assert.ok(a.some((v, i) => v !== b[i]), "the adapter changes the prompt's logprobs");
    const moved = Math.max(...a.map((v, i) => Math.abs(v! - b[i]!)));
    assert.ok(moved > 1e-4, `the adapter moves logprobs by more than rounding: ${moved}`);

    // A chat request picks the adapter the same way: the templated prompt through the adapter, as
    // training sampled the solver.
    const messages = [{ role: "user", content: "3+4=?" }];
    const chat = await server.json("/v1/chat/completions", {
      model: "solver-v1",
      messages,
      max_tokens: 8,
      seed: 2,
      logprobs: true,
    });
    assert.equal(chat.status, 200, JSON.stringify(chat.body));
    const [chatRow] = await inProcess({
      prompts: [tokenizer.encodeChat(messages)],
      samples: [0],
      seed: 2,
      maxTokens: 8,
      temperature: 1,
      topP: 1,
      adapterDir,
    });
    assert.deepEqual(chat.body.choices[0].token_ids, chatRow.tokens);
    assert.deepEqual(
      chat.body.choices[0].logprobs.content.map((e: { logprob: number }) => e.logprob),
      chatRow.logprobs,
    );

    const unloaded = await server.post("/v1/unload_lora_adapter", { lora_name: "solver-v1" });
    assert.equal(unloaded.status, 200);
    assert.equal(await unloaded.text(), "Success: LoRA adapter 'solver-v1' removed successfully.");
    const gone = await server.json("/v1/completions", { ...body, model: "solver-v1" });
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error.code, "model_not_found");
    assert.equal(gone.body.error.param, "model");
    const again = await server.json("/v1/unload_lora_adapter", { lora_name: "solver-v1" });
    assert.equal(again.status, 404);
    // Loaded again under a new name: the same answers as before.
    const reloaded = await server.post("/v1/load_lora_adapter", {
      lora_name: "solver-v2",
      lora_path: adapterDir,
    });
    assert.equal(reloaded.status, 200);
    const v2 = await server.json("/v1/completions", { ...body, model: "solver-v2" });
    assert.deepEqual(v2.body.choices[0].token_ids, row.tokens);
    assert.equal(await server.stop(), 0, server.stderr());
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
