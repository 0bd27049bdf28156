/**
 * Cross-site writes to `deno task serve`: a page on another site can make the browser POST to
 * 127.0.0.1 (a form, or a no-cors fetch of text/plain) without asking. The real server refuses
 * such requests before they run a completion or load or unload an adapter, and still answers
 * clients that send no Origin (curl, the openai client, the trainer's rollouts) and its own origin.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { writeAdapter } from "../serve/adapter-files.ts";
import { startServe } from "../serve/server-process.ts";

const EVIL = "http://evil.example";
const TEXT = { "content-type": "text/plain;charset=UTF-8" };

Deno.test("serve refuses cross-site requests and answers clients that send no Origin", async (t) => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-serve-cross-site-" });
  const adapters = join(tmp, "adapters");
  await writeAdapter(join(adapters, "solver"), { rank: 4, targets: ["q_proj"] });
  await using server = await startServe("--model", "embedded", "--lora-dir", adapters);
  const completion = { prompt: "1+1=", max_tokens: 2, seed: 1 };
  const load = { lora_name: "solver", lora_path: join(adapters, "solver") };
  const sequences = async () => (await (await server.get("/health")).json()).sequences;
  const models = async () =>
    (await (await server.get("/v1/models")).json()).data.map((m: { id: string }) => m.id);
  /** Expects OpenAI's error JSON with `status` and a message matching `message`. */
  const refused = async (res: Promise<Response>, status: number, message: RegExp) => {
    const r = await res;
    const body = await r.json();
    assert.equal(r.status, status, JSON.stringify(body));
    assert.match(body.error.message, message);
  };

  await t.step("another site's form or no-cors fetch: 403, nothing runs or loads", async () => {
    const before = await sequences();
    for (const path of ["/v1/completions", "/generate"]) {
      const body = path === "/generate" ? { input_ids: [1, 2], sampling_params: {} } : completion;
      await refused(
        server.post(path, JSON.stringify(body), { ...TEXT, origin: EVIL }),
        403,
        /403 forbidden: a request from origin http:\/\/evil\.example; this model server/,
      );
    }
    for (const path of ["/v1/load_lora_adapter", "/load_lora_adapter"]) {
      await refused(server.post(path, JSON.stringify(load), { ...TEXT, origin: EVIL }), 403, /403/);
      // A page may also send JSON's type when it asks first; the preflight is never granted,
      // and the request itself is refused all the same.
      await refused(server.post(path, load, { origin: EVIL }), 403, /403/);
    }
    await refused(server.post("/v1/completions", completion, { origin: "null" }), 403, /null/);
    assert.equal(await sequences(), before, "no completion ran");
    assert.deepEqual(await models(), ["embedded"], "no adapter was loaded");
  });

  await t.step("a cross-site unload: 403, the adapter stays", async () => {
    assert.equal((await server.post("/v1/load_lora_adapter", load)).status, 200);
    for (const path of ["/v1/unload_lora_adapter", "/unload_lora_adapter"]) {
      await refused(
        server.post(path, JSON.stringify({ lora_name: "solver" }), { ...TEXT, origin: EVIL }),
        403,
        /403/,
      );
    }
    assert.deepEqual(await models(), ["embedded", "solver"]);
  });

  await t.step("without Origin: Sec-Fetch-Site cross-site is 403, text/plain is 415", async () => {
    const before = await sequences();
    await refused(
      server.post("/v1/completions", completion, { "sec-fetch-site": "cross-site" }),
      403,
      /another site \(Sec-Fetch-Site: cross-site\)/,
    );
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
      await refused(
        server.post("/v1/completions", JSON.stringify(completion), { "content-type": type }),
        415,
        /415 unsupported media type .*: send Content-Type: application\/json .*curl: --json/,
      );
    }
    assert.equal(await sequences(), before, "no completion ran");
  });

  await t.step(
    "no Origin and JSON (curl, the openai client), or its own origin: served",
    async () => {
      const own = await server.post("/v1/completions", completion, { origin: server.url });
      assert.equal(own.status, 200, await own.clone().text());
      const plain = await server.post("/v1/completions", completion, {
        "content-type": "application/json; charset=utf-8",
      });
      assert.equal(plain.status, 200, await plain.text());
      assert.equal((await own.json()).object, "text_completion");
      // Following a link from another site to a GET route is a navigation: answered.
      const nav = await fetch(`${server.url}/v1/models`, {
        headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" },
      });
      assert.equal(nav.status, 200, await nav.text());
      assert.equal(
        (await server.post("/v1/unload_lora_adapter", { lora_name: "solver" })).status,
        200,
      );
      assert.deepEqual(await models(), ["embedded"]);
    },
  );

  assert.equal(await server.stop(), 0, server.stderr());
  await Deno.remove(tmp, { recursive: true });
});
