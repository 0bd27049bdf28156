/**
 * `deno task serve` as a user starts it: usage mistakes exit 2 naming the flag and the fix, a
 * folder that is not a checkpoint exits 1 naming the missing file; SIGTERM stops a running server
 * with exit 0.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadEmbeddedModel, saveEmbeddedModel } from "../../adapters/model/mod.ts";
import { runCli } from "../support/run-cli.ts";
import { startServe } from "./server-process.ts";

const SERVE = "engine/cli/serve.ts";

Deno.test("serve: usage mistakes exit 2, a folder without a checkpoint exits 1", async () => {
  const usage = async (args: string[], message: RegExp) => {
    const out = await runCli(SERVE, ...args);
    assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
    assert.match(out.stderr, message);
    assert.match(out.stderr, /usage: deno task serve --model DIR\|embedded/);
  };
  await usage([], /--model is required/);
  await usage(["--model", "/no/such/model"], /--model \/no\/such\/model: no such folder/);
  await usage(
    ["--model", "embedded", "--device", "tpu"],
    /--device must be one of cpu, wasm, webgpu/,
  );
  await usage(["--model", "embedded", "--port", "70000"], /--port 70000: expected a whole number/);
  await usage(["--model", "embedded", "--max-loras", "0"], /--max-loras 0/);
  await usage(["--model", "embedded", "--lora-dir", "/no/such/dir"], /--lora-dir .*no such folder/);
  await usage(["--model", "embedded", "extra"], /unexpected argument extra/);
  await usage(["--model", "embedded", "--allow-host", "http://x:1/"], /--allow-host http/);
  await usage(["--model", "embedded", "--bogus"], /bogus/);

  const empty = await Deno.makeTempDir({ prefix: "polyrl-serve-cli-" });
  try {
    const out = await runCli(SERVE, "--model", empty);
    assert.equal(out.code, 1, out.stderr);
    assert.match(out.stderr, /config\.json/);
  } finally {
    await Deno.remove(empty, { recursive: true });
  }
});

Deno.test("serve: --served-model-name names the base; SIGTERM stops it with exit 0", async () => {
  await using server = await startServe("--model", "embedded", "--served-model-name", "tiny");
  const models = await (await server.get("/v1/models")).json();
  assert.equal(models.data[0].id, "tiny");
  const r = await server.json("/v1/completions", { model: "tiny", prompt: "1+1=", max_tokens: 2 });
  assert.equal(r.status, 200);
  assert.equal(r.body.model, "tiny");
  assert.equal(await server.stop(), 0, server.stderr());
});

Deno.test("serve --model DIR: an HF checkpoint folder serves as the same model does embedded", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-serve-dir-" });
  try {
    const dir = join(tmp, "checkpoint");
    await saveEmbeddedModel(dir, (await loadEmbeddedModel()).tensors);
    const body = { prompt: "7+8=", max_tokens: 12, seed: 5, logprobs: 0 };
    let fromDir;
    {
      await using server = await startServe("--model", dir);
      const models = await (await server.get("/v1/models")).json();
      assert.equal(models.data[0].id, dir);
      fromDir = await server.json("/v1/completions", body);
      assert.equal(fromDir.status, 200, JSON.stringify(fromDir.body));
    }
    await using embedded = await startServe("--model", "embedded");
    const fromEmbedded = await embedded.json("/v1/completions", body);
    assert.deepEqual(fromDir.body.choices[0].token_ids, fromEmbedded.body.choices[0].token_ids);
    assert.deepEqual(
      fromDir.body.choices[0].logprobs.token_logprobs,
      fromEmbedded.body.choices[0].logprobs.token_logprobs,
    );
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
