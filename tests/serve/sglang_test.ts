/**
 * SGLang's routes on `deno task serve`, as the sglang rollout dialect uses them: adapters loaded
 * and unloaded with `/load_lora_adapter` and `/unload_lora_adapter` (SGLang's answer
 * `{success, error_message, loaded_adapters}`, 400 when refused, with the same path checks as
 * vLLM's routes), and a turn on native `/generate` (input_ids, sampling_params, return_logprob,
 * lora_path), whose tokens and logprobs equal the same request on `/v1/completions`, which the
 * other serve tests hold to the in-process generator. Hostile bodies get a 400 naming the field,
 * and the server keeps serving.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { writeAdapter } from "./adapter-files.ts";
import { inProcess } from "./in-process.ts";
import { startServe } from "./server-process.ts";

Deno.test("serve answers SGLang's /generate and LoRA routes, and refuses hostile bodies", async (t) => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-serve-sglang-" });
  try {
    const allowed = join(tmp, "adapters");
    const outside = join(tmp, "outside");
    await writeAdapter(join(allowed, "good"), { rank: 4, targets: ["q_proj", "v_proj"] });
    await writeAdapter(join(outside, "elsewhere"), { rank: 4, targets: ["q_proj"] });
    await Deno.symlink(join(outside, "elsewhere"), join(allowed, "link-out"));
    await using server = await startServe("--model", "embedded", "--lora-dir", allowed);
    const stillUp = async () => {
      const r = await server.json("/generate", { input_ids: [40, 41], sampling_params: {} });
      assert.equal(r.status, 200, `still serving: ${JSON.stringify(r.body)}`);
    };
    /** An SGLang refusal of an adapter change: 400 with success false and the reason. */
    const adapterRefused = async (path: string, body: unknown, message: RegExp) => {
      const r = await server.json(path, body);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.success, false);
      assert.match(r.body.error_message, message);
      await stillUp();
    };
    /** A body refused before it is read: a 400 error envelope naming `param`. */
    const refused = async (path: string, body: unknown, message: RegExp, param?: string | null) => {
      const res = await server.post(path, body);
      const text = await res.text();
      assert.equal(res.status, 400, `${JSON.stringify(body)?.slice(0, 120)} -> ${text}`);
      const { error } = JSON.parse(text);
      assert.match(error.message, message);
      if (param !== undefined) assert.equal(error.param, param);
      await stillUp();
    };

    const prompt = [40, 41, 42, 43];
    const sampling = { max_new_tokens: 12, temperature: 1, top_p: 1, sampling_seed: 7 };
    await t.step("load, generate on the adapter and on the base, unload", async () => {
      const loaded = await server.json("/load_lora_adapter", {
        lora_name: "good-v0",
        lora_path: join(allowed, "good"),
      });
      assert.equal(loaded.status, 200, JSON.stringify(loaded.body));
      assert.deepEqual(loaded.body, {
        success: true,
        error_message: null,
        loaded_adapters: { "good-v0": join(allowed, "good") },
      });
      for (const lora of ["good-v0", null]) {
        const native = await server.json("/generate", {
          input_ids: prompt,
          sampling_params: sampling,
          return_logprob: true,
          ...(lora ? { lora_path: lora } : {}),
        });
        assert.equal(native.status, 200, JSON.stringify(native.body));
        const openai = await server.json("/v1/completions", {
          prompt,
          model: lora ?? "embedded",
          max_tokens: 12,
          temperature: 1,
          seed: 7,
          logprobs: 0,
        });
        const choice = openai.body.choices[0];
        const meta = native.body.meta_info;
        assert.deepEqual(native.body.output_ids, choice.token_ids);
        assert.deepEqual(
          meta.output_token_logprobs,
          choice.token_ids.map((
            id: number,
            i: number,
          ) => [choice.logprobs.token_logprobs[i], id, null]),
        );
        assert.equal(native.body.text, choice.text);
        assert.equal(meta.prompt_tokens, prompt.length);
        assert.equal(meta.completion_tokens, choice.token_ids.length);
        assert.equal(meta.finish_reason.type, choice.finish_reason);
      }
      // The adapter's answer is the in-process generator's with that adapter.
      const [row] = await inProcess({
        prompts: [prompt],
        samples: [0],
        seed: 7,
        maxTokens: 12,
        temperature: 1,
        topP: 1,
        adapterDir: join(allowed, "good"),
      });
      const onAdapter = await server.json("/generate", {
        input_ids: prompt,
        sampling_params: sampling,
        return_logprob: true,
        lora_path: "good-v0",
      });
      assert.deepEqual(onAdapter.body.output_ids, row.tokens);
      assert.deepEqual(
        onAdapter.body.meta_info.output_token_logprobs.map((e: number[]) => e[0]),
        row.logprobs,
      );
      // Without return_logprob there are none; with ignore_eos the length ends it.
      const long = await server.json("/generate", {
        input_ids: prompt,
        sampling_params: { ...sampling, max_new_tokens: 5, ignore_eos: true },
      });
      assert.equal(long.body.meta_info.output_token_logprobs, undefined);
      assert.deepEqual(long.body.meta_info.finish_reason, { type: "length", length: 5 });

      const unloaded = await server.json("/unload_lora_adapter", { lora_name: "good-v0" });
      assert.equal(unloaded.status, 200);
      assert.deepEqual(unloaded.body, { success: true, error_message: null, loaded_adapters: {} });
      await refused(
        "/generate",
        { input_ids: prompt, lora_path: "good-v0" },
        /not a loaded adapter/,
        "lora_path",
      );
    });

    await t.step("adapter paths outside --lora-dir and bad loads: 400, success false", async () => {
      const L = "/load_lora_adapter";
      await adapterRefused(L, { lora_name: "a", lora_path: join(outside, "elsewhere") }, /outside/);
      await adapterRefused(L, { lora_name: "a", lora_path: join(allowed, "link-out") }, /outside/);
      await adapterRefused(L, { lora_name: "a", lora_path: "/etc" }, /outside/);
      await adapterRefused(L, { lora_name: "a", lora_path: join(allowed, "missing") }, /exist/);
      await adapterRefused(L, { lora_name: "embedded", lora_path: join(allowed, "good") }, /base/);
      const ok = await server.json(L, { lora_name: "twice", lora_path: join(allowed, "good") });
      assert.equal(ok.status, 200);
      await adapterRefused(L, { lora_name: "twice", lora_path: join(allowed, "good") }, /already/);
      await adapterRefused("/unload_lora_adapter", { lora_name: "never" }, /cannot be found/);
      await refused(L, { lora_name: "a" }, /lora_path/, "lora_path");
      await refused(L, { lora_name: "bad name!", lora_path: join(allowed, "good") }, /lora_name/);
      await refused("/unload_lora_adapter", "{bad json", /not valid JSON/, null);
    });

    await t.step("bad /generate bodies: 400 naming the field", async () => {
      const G = "/generate";
      await refused(G, "{bad json", /not valid JSON/, null);
      await refused(G, "[1]", /must be a JSON object/);
      await refused(G, {}, /input_ids/, "input_ids");
      await refused(G, { input_ids: "40 41" }, /input_ids/, "input_ids");
      await refused(G, { input_ids: [] }, /at least one id/, "input_ids");
      await refused(G, { input_ids: [1.5] }, /input_ids/, "input_ids.0");
      await refused(G, { input_ids: [-1] }, /input_ids/, "input_ids.0");
      await refused(G, { input_ids: [10 ** 9] }, /outside the vocabulary/, "input_ids");
      await refused(G, { input_ids: [40], text: "hi" }, /input_ids/, "text");
      await refused(G, { input_ids: [40], stream: true }, /streaming/, "stream");
      await refused(G, { input_ids: [40], sampling_params: [] }, /sampling_params/);
      await refused(
        G,
        { input_ids: [40], sampling_params: { top_k: 5 } },
        /top_k|unrecognized/i,
        "sampling_params",
      );
      await refused(G, { input_ids: [40], sampling_params: { temperature: "hot" } }, /temperature/);
      await refused(G, { input_ids: [40], sampling_params: { max_new_tokens: 0 } }, /max_new/);
      await refused(
        G,
        { input_ids: [40], sampling_params: { max_new_tokens: 10 ** 9 } },
        /maximum context length/,
      );
      await refused(G, { input_ids: [40], sampling_params: { sampling_seed: -1 } }, /seed/);
      await refused(G, { input_ids: [40], return_logprob: "yes" }, /return_logprob/);
      await refused(G, { input_ids: [40], lora_path: 3 }, /lora_path/, "lora_path");
      await refused(G, { input_ids: [40], polyrl_draw: { purpose: "x" } }, /seed/);
    });
    assert.equal(await server.stop(), 0, server.stderr());
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
