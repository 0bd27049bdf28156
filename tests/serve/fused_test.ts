/**
 * `deno task serve --fused`: the server builds RMSNorm and RoPE as one node each, as a run with
 * runtime.fused_ops does. A seeded completion is the in-process generation with the same fused
 * graphs, token for token and logprob for logprob, and not the composed graphs' logprobs.
 */
import assert from "node:assert/strict";
import { FUSED_OPS, loadEmbeddedModel } from "../../adapters/model/mod.ts";
import { inProcess } from "./in-process.ts";
import { startServe } from "./server-process.ts";

const PROMPT = "Question: 12+7=?\nAnswer:";

Deno.test("serve --fused answers with the fused graphs' tokens and logprobs", async () => {
  const tokenizer = (await loadEmbeddedModel()).tokenizer!;
  await using server = await startServe(
    "--model",
    "embedded",
    "--fused",
    FUSED_OPS.join(","),
  );
  const body = { prompt: PROMPT, max_tokens: 16, temperature: 0.8, top_p: 0.95, seed: 99 };
  const res = await server.json("/v1/completions", { ...body, logprobs: 0 });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const choice = res.body.choices[0];
  const batch = {
    prompts: [tokenizer.encode(PROMPT)],
    samples: [0],
    seed: 99,
    maxTokens: 16,
    temperature: 0.8,
    topP: 0.95,
  };
  const [fused] = await inProcess({ ...batch, fused: FUSED_OPS });
  assert.deepEqual(choice.token_ids, fused.tokens);
  assert.deepEqual(choice.logprobs.token_logprobs, fused.logprobs);
  const [composed] = await inProcess(batch);
  assert.notDeepEqual(choice.logprobs.token_logprobs, composed.logprobs, "the graphs are fused");
});
