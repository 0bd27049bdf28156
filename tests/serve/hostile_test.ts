/**
 * Hostile ground for `deno task serve`: malformed and out-of-range requests, unknown models and
 * adapters, adapter paths outside the allowed folders or at folders that are not an adapter of
 * this base (rank, targets, shapes), oversized bodies, another site's Host, clients that vanish
 * mid-stream. Each gets OpenAI's error JSON with the right status and a message naming the
 * problem, and the server keeps serving (checked after every attack).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { writeAdapter } from "./adapter-files.ts";
import { inProcess } from "./in-process.ts";
import { startServe } from "./server-process.ts";

Deno.test("serve refuses hostile requests with OpenAI errors and stays up", async (t) => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-serve-hostile-" });
  const allowed = join(tmp, "adapters");
  const outside = join(tmp, "outside");
  await Deno.mkdir(allowed);
  await Deno.mkdir(outside);
  await writeAdapter(join(allowed, "good"), { rank: 4, targets: ["q_proj", "v_proj"] });
  await writeAdapter(join(allowed, "good2"), {
    rank: 4,
    targets: ["q_proj", "v_proj"],
    fill: 0.05,
  });
  await writeAdapter(join(outside, "elsewhere"), { rank: 4, targets: ["q_proj"] });
  await Deno.symlink(join(outside, "elsewhere"), join(allowed, "link-out"));
  await writeAdapter(join(allowed, "small-base"), { rank: 4, targets: ["q_proj"], size: "small" });
  await writeAdapter(join(allowed, "rank-80"), { rank: 80, targets: ["q_proj"] });
  await Deno.mkdir(join(allowed, "empty"));
  await Deno.mkdir(join(allowed, "garbage"));
  await Deno.writeTextFile(join(allowed, "garbage", "adapter_config.json"), "{not json");
  await Deno.writeTextFile(join(allowed, "file.txt"), "not a folder");
  // A config naming q_proj over weights of the layers' o_proj: the tensors match no target.
  await writeAdapter(join(allowed, "wrong-targets"), { rank: 4, targets: ["o_proj"] });
  const wrongConfig = join(allowed, "wrong-targets", "adapter_config.json");
  const cfg = JSON.parse(await Deno.readTextFile(wrongConfig));
  await Deno.writeTextFile(wrongConfig, JSON.stringify({ ...cfg, target_modules: ["q_proj"] }));

  await using server = await startServe(
    "--model",
    "embedded",
    "--lora-dir",
    allowed,
    "--max-body-bytes",
    "65536",
  );
  const stillUp = async () => {
    const r = await server.json("/v1/completions", { prompt: "1+1=", max_tokens: 2, seed: 1 });
    assert.equal(r.status, 200, `still serving: ${JSON.stringify(r.body)}`);
  };
  /** Sends `body`, expects `status` with an OpenAI error naming `param` and matching `message`. */
  const refused = async (
    path: string,
    body: unknown,
    status: number,
    message: RegExp,
    param?: string | null,
  ) => {
    const res = await server.post(path, body);
    const text = await res.text();
    assert.equal(res.status, status, `${JSON.stringify(body)?.slice(0, 120)} -> ${text}`);
    assert.match(res.headers.get("content-type") ?? "", /application\/json/);
    const { error } = JSON.parse(text);
    assert.equal(typeof error.message, "string");
    assert.equal(typeof error.type, "string");
    assert.match(error.message, message);
    if (param !== undefined) assert.equal(error.param, param);
    await stillUp();
  };

  await t.step("bad JSON and wrong types: 400 naming the field", async () => {
    const C = "/v1/completions";
    await refused(C, "{bad json", 400, /not valid JSON/, null);
    await refused(C, "[1, 2]", 400, /must be a JSON object/);
    await refused(C, "null", 400, /must be a JSON object/);
    await refused(C, {}, 400, /prompt/, "prompt");
    await refused(C, { prompt: 42 }, 400, /prompt/, "prompt");
    await refused(C, { prompt: "x", max_tokens: "10" }, 400, /max_tokens/, "max_tokens");
    await refused(C, { prompt: "x", max_tokens: 1.5 }, 400, /max_tokens/, "max_tokens");
    await refused(C, { prompt: "x", temperature: -1 }, 400, /temperature/, "temperature");
    await refused(C, { prompt: "x", top_p: 0 }, 400, /top_p/, "top_p");
    await refused(C, { prompt: "x", seed: -5 }, 400, /seed/, "seed");
    await refused(C, { prompt: "x", stop: Array(40).fill("a") }, 400, /stop/, "stop");
    await refused(C, { prompt: "x", logprobs: 100 }, 400, /logprobs/, "logprobs");
    await refused(
      C,
      { prompt: "x", presence_penalty: 0.5 },
      400,
      /not supported/,
      "presence_penalty",
    );
    await refused(C, { prompt: "x", best_of: 3 }, 400, /not supported/, "best_of");
    await refused(C, { prompt: [] }, 400, /prompt/, "prompt");
    await refused(C, { prompt: [-1, 4] }, 400, /prompt/);
    await refused(C, { prompt: [5, 1e9] }, 400, /outside the vocabulary/, "prompt");
    await refused(C, { prompt: "" }, 400, /empty/, "prompt");
    const chat = "/v1/chat/completions";
    await refused(chat, { messages: [] }, 400, /messages/, "messages");
    await refused(chat, { messages: [{ role: "wizard", content: "hi" }] }, 400, /role/);
    await refused(chat, { messages: [{ role: "user" }] }, 400, /content/);
    await refused(
      chat,
      { messages: [{ role: "user", content: "x" }], top_logprobs: 2 },
      400,
      /needs logprobs/,
    );
  });

  await t.step("negative, zero and huge max_tokens or n: 400", async () => {
    const C = "/v1/completions";
    await refused(C, { prompt: "x", max_tokens: -1 }, 400, /max_tokens/, "max_tokens");
    await refused(C, { prompt: "x", max_tokens: 0 }, 400, /at least 1/, "max_tokens");
    await refused(
      C,
      { prompt: "x", max_tokens: 1e9 },
      400,
      /maximum context length is 1024/,
      "max_tokens",
    );
    await refused(C, { prompt: "x", max_tokens: 1e300 }, 400, /max_tokens/, "max_tokens");
    await refused(C, { prompt: "x", n: 0 }, 400, /n/, "n");
    await refused(C, { prompt: "x", n: 100000 }, 400, /n/, "n");
    await refused(C, { prompt: Array(2000).fill(5) }, 400, /maximum context length/, "prompt");
    await refused(
      "/v1/chat/completions",
      {
        messages: [{ role: "user", content: "x" }],
        max_tokens: 5000,
      },
      400,
      /maximum context length/,
    );
  });

  await t.step("unknown model, adapter and route: 404", async () => {
    await refused(
      "/v1/completions",
      { prompt: "x", model: "gpt-4" },
      404,
      /does not exist/,
      "model",
    );
    await refused(
      "/v1/chat/completions",
      {
        model: "nope",
        messages: [{ role: "user", content: "x" }],
      },
      404,
      /does not exist/,
      "model",
    );
    await refused("/v1/unload_lora_adapter", { lora_name: "never-loaded" }, 404, /cannot be found/);
    await refused("/v1/embeddings", { input: "x" }, 404, /no route/);
  });

  await t.step(
    "adapter paths outside --lora-dir, or not an adapter of this base: refused",
    async () => {
      const L = "/v1/load_lora_adapter";
      const load = (name: string, path: string) => ({ lora_name: name, lora_path: path });
      await refused(L, { lora_name: "x" }, 400, /lora_path/, "lora_path");
      await refused(
        L,
        load("a", join(outside, "elsewhere")),
        403,
        /outside the adapter folders/,
        "lora_path",
      );
      await refused(L, load("a", join(allowed, "link-out")), 403, /outside the adapter folders/);
      await refused(L, load("a", join(allowed, "..", "outside", "elsewhere")), 403, /outside/);
      await refused(L, load("a", "/etc"), 403, /outside/);
      await refused(L, load("a", allowed), 403, /outside/);
      await refused(L, load("a", join(allowed, "missing")), 404, /does not exist/);
      await refused(L, load("a", join(allowed, "file.txt")), 400, /is a file/);
      await refused(L, load("a", join(allowed, "empty")), 400, /adapter_config\.json/);
      await refused(L, load("a", join(allowed, "garbage")), 400, /not valid JSON/);
      await refused(
        L,
        load("a", join(allowed, "small-base")),
        400,
        /base weight is \[|not a PEFT LoRA adapter of this base/,
      );
      await refused(
        L,
        load("a", join(allowed, "rank-80")),
        400,
        /rank 80 exceeds --max-lora-rank 64/,
      );
      await refused(
        L,
        load("a", join(allowed, "wrong-targets")),
        400,
        /matches none of target_modules/,
      );
      await refused(L, load("embedded", join(allowed, "good")), 400, /base model's name/);
      await refused(L, load("bad name!", join(allowed, "good")), 400, /lora_name/);
      // `embedded:good` would capture SGLang-style requests for `embedded:good`, adapter `good`.
      for (const route of [L, "/load_lora_adapter"]) {
        await refused(
          route,
          load("embedded:good", join(allowed, "good")),
          400,
          /':' is not allowed in an adapter name: `BASE:NAME` names adapter NAME/,
          "lora_name",
        );
      }
      const ok = await server.post(L, load("good", join(allowed, "good")));
      assert.equal(ok.status, 200, await ok.text());
      await refused(L, load("good", join(allowed, "good")), 400, /already been loaded/);
      const r = await server.json("/v1/completions", {
        prompt: "1+1=",
        model: "good",
        max_tokens: 3,
      });
      assert.equal(r.status, 200);
      // Unloaded while a sequence runs on it: that sequence finishes, new requests get 404.
      const long = await server.post("/v1/completions", {
        prompt: "Once",
        model: "good",
        max_tokens: 200,
        ignore_eos: true,
        stream: true,
      });
      const reader = long.body!.getReader();
      let streamed = new TextDecoder().decode((await reader.read()).value);
      const unloaded = await server.post("/v1/unload_lora_adapter", { lora_name: "good" });
      assert.equal(unloaded.status, 200, await unloaded.text());
      await refused("/v1/completions", { prompt: "x", model: "good" }, 404, /does not exist/);
      // Loaded again under the same name (other matrices) while the old one still runs: the new
      // one's sequences run on the new matrices (as in-process), the old one's on the old.
      const again = await server.post("/v1/load_lora_adapter", {
        lora_name: "good",
        lora_path: join(allowed, "good2"),
      });
      assert.equal(again.status, 200, await again.text());
      const prompt = [40, 41, 42];
      const fresh = await server.json("/v1/completions", {
        prompt,
        model: "good",
        max_tokens: 8,
        seed: 4,
        logprobs: 0,
      });
      const [row] = await inProcess({
        prompts: [prompt],
        samples: [0],
        seed: 4,
        maxTokens: 8,
        temperature: 1,
        topP: 1,
        adapterDir: join(allowed, "good2"),
      });
      assert.deepEqual(fresh.body.choices[0].token_ids, row.tokens);
      assert.deepEqual(fresh.body.choices[0].logprobs.token_logprobs, row.logprobs);
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        streamed += new TextDecoder().decode(r.value);
      }
      const chunks = streamed.trim().split("\n\n").map((e) => e.slice("data: ".length));
      assert.equal(chunks.at(-1), "[DONE]");
      const ids = chunks.slice(0, -1).flatMap((e) => JSON.parse(e).choices[0].token_ids);
      assert.equal(ids.length, 200, "the running sequence ran to its end");
    },
  );

  await t.step("an oversized body: 413", async () => {
    await refused("/v1/completions", { prompt: "x".repeat(70_000) }, 413, /over 65536 bytes/);
  });

  await t.step("another site's Host (DNS rebinding): 421; localhost is answered", async () => {
    const port = Number(new URL(server.url).port);
    // fetch sets Host from the URL, as a browser does; a rebinding page's request carries its own
    // name, so the request is written by hand on a socket.
    const raw = async (host: string, method: string, path: string, body = "") => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      const request = `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: ` +
        `application/json\r\nContent-Length: ${new TextEncoder().encode(body).length}\r\n` +
        `Connection: close\r\n\r\n${body}`;
      await conn.write(new TextEncoder().encode(request));
      let text = "";
      for await (const chunk of conn.readable) text += new TextDecoder().decode(chunk);
      const status = Number(text.match(/^HTTP\/1\.1 (\d{3})/)?.[1]);
      return { status, body: text.slice(text.indexOf("\r\n\r\n") + 4) };
    };
    const evil = await raw(`evil.example:${port}`, "POST", "/v1/completions", '{"prompt":"x"}');
    assert.equal(evil.status, 421);
    assert.match(evil.body, /does not answer to Host \\"evil\.example/);
    assert.equal((await raw(`evil.example:${port}`, "GET", "/v1/models")).status, 421);
    assert.equal((await raw(`127.0.0.1:${port + 1}`, "GET", "/v1/models")).status, 421);
    assert.equal((await raw(`localhost:${port}`, "GET", "/v1/models")).status, 200);
    await stillUp();
  });

  await t.step(
    "clients that disconnect mid-stream or mid-request: the server carries on",
    async () => {
      const health = async () => await (await server.get("/health")).json();
      const before = await health();
      const abort = new AbortController();
      const res = await fetch(`${server.url}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          prompt: "Once",
          max_tokens: 900,
          stream: true,
          seed: 3,
          ignore_eos: true,
        }),
        signal: abort.signal,
      });
      const reader = res.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      assert.match(first, /^data: \{/);
      abort.abort();
      const quiet = new AbortController();
      const pending = fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          messages: [{ role: "user", content: "x" }],
          max_tokens: 900,
          ignore_eos: true,
        }),
        signal: quiet.signal,
      }).catch((e) => e);
      await new Promise((r) => setTimeout(r, 50));
      quiet.abort();
      await pending;
      // Both sequences leave the batch: nothing is left running.
      for (
        let i = 0;
        i < 100 && ((await health()).running > 0 || (await health()).waiting > 0);
        i++
      ) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const after = await health();
      assert.deepEqual([after.running, after.waiting], [0, 0]);
      // Both ended because their clients left, not by running out their 900 tokens.
      assert.equal(after.aborted - before.aborted, 2);
      await stillUp();
    },
  );

  assert.equal(await server.stop(), 0, server.stderr());
  assert.doesNotMatch(server.stderr(), /error/i, "no failure was logged");
  await Deno.remove(tmp, { recursive: true });
});
