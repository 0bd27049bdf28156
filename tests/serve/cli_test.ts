/**
 * `deno task serve` as a user starts it: usage mistakes exit 2 naming the flag and the fix, a
 * folder that is not a checkpoint exits 1 naming the missing file; SIGTERM stops a running server
 * with exit 0.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadEmbeddedModel, saveEmbeddedModel } from "../../adapters/model/mod.ts";
import { writeTinyCheckpoint } from "../hf/tiny-checkpoint.ts";
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
  await usage(
    ["--model", "embedded", "--fused", "rms_norm,flash"],
    /--fused rms_norm,flash: flash is not a fusable part; expected some of rms_norm, rotary/,
  );

  const empty = await Deno.makeTempDir({ prefix: "polyrl-serve-cli-" });
  try {
    // A model whose head size GroupQueryAttention does not take: refused before serving.
    const narrow = join(empty, "narrow-heads");
    await Deno.mkdir(narrow);
    await writeTinyCheckpoint(narrow);
    await usage(
      ["--model", narrow, "--fused", "rms_norm,attention"],
      /--fused rms_norm,attention: attention needs a head_dim that is a multiple of 8 .* is 4; leave attention out/,
    );
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

/** One request log line: time, client, method, path, then what the test expects after them. */
const logLine = (rest: string) =>
  new RegExp(
    `^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z 127\\.0\\.0\\.1:\\d+ ${rest}$`,
  );

Deno.test("serve: one request log line per request on stderr, and no Deno warning", async () => {
  await using server = await startServe("--model", "embedded");
  const completion = await server.json("/v1/completions", {
    prompt: "1+1=",
    max_tokens: 3,
    seed: 1,
    ignore_eos: true,
  });
  assert.equal(completion.status, 200);
  const stream = await server.post("/v1/chat/completions", {
    messages: [{ role: "user", content: "hi" }],
    max_tokens: 2,
    ignore_eos: true,
    stream: true,
  });
  assert.match(await stream.text(), /data: \[DONE\]\n\n$/);
  assert.equal((await server.get("/health")).status, 200);
  assert.equal((await server.get("/v1/nowhere%0Ahere")).status, 404);
  const unknown = await server.json("/v1/completions", { model: "nope", prompt: "x" });
  assert.equal(unknown.status, 404);
  assert.equal(await server.stop(), 0, server.stderr());

  const lines = server.stderr().trimEnd().split("\n");
  const expected = [
    "POST /v1/completions 200 \\d+ms model=embedded prompt_tokens=4 completion_tokens=3",
    // <|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n: 21 tokens of the embedded model.
    "POST /v1/chat/completions 200 \\d+ms model=embedded prompt_tokens=21 completion_tokens=2",
    "GET /health 200 \\d+ms",
    "GET /v1/nowhere%0Ahere 404 \\d+ms",
    "POST /v1/completions 404 \\d+ms",
  ];
  assert.equal(lines.length, expected.length, server.stderr());
  lines.forEach((line, i) => assert.match(line, logLine(expected[i])));
  // Deno's legacy request.signal warning, or anything else, would be a line of its own.
  assert.doesNotMatch(server.stderr(), /request\.signal|legacy/);
});

Deno.test("serve --log FILE: the request log goes to the file, not stderr", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-serve-log-" });
  try {
    const file = join(tmp, "requests.log");
    await Deno.writeTextFile(file, "earlier line\n");
    {
      await using server = await startServe("--model", "embedded", "--log", file);
      const r = await server.json("/v1/completions", { prompt: "2+2=", max_tokens: 1, seed: 3 });
      assert.equal(r.status, 200);
      assert.equal(await server.stop(), 0, server.stderr());
      assert.equal(server.stderr(), "");
    }
    const [earlier, line, ...rest] = (await Deno.readTextFile(file)).split("\n");
    assert.equal(earlier, "earlier line");
    assert.match(
      line,
      logLine("POST /v1/completions 200 \\d+ms model=embedded prompt_tokens=4 completion_tokens=1"),
    );
    assert.deepEqual(rest, [""]);

    const nowhere = join(tmp, "no-such-folder", "requests.log");
    const refused = await runCli(SERVE, "--model", "embedded", "--log", nowhere);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, new RegExp(`--log ${nowhere}: cannot write it \\(`));
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("serve: a port in use is exit 2 naming a free port to pass instead", async () => {
  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = taken.addr.port;
  const out = await runCli(SERVE, "--model", "embedded", "--port", String(port));
  assert.equal(out.code, 2, out.stderr);
  const message = new RegExp(
    `^error: port ${port} is in use; pass --port (\\d+), or stop the process listening on ` +
      `127\\.0\\.0\\.1:${port}$`,
    "m",
  );
  assert.match(out.stderr, message);
  const suggested = Number(out.stderr.match(message)![1]);
  assert.notEqual(suggested, port);
  // Free when suggested: it binds (unless another process took it since, which is rare).
  Deno.listen({ hostname: "127.0.0.1", port: suggested }).close();
  assert.match(out.stderr, /usage: deno task serve/);
});

Deno.test("serve and web listen on different ports by default: 8000 (vLLM's) and 8100", async () => {
  const serveHelp = await runCli(SERVE, "--help");
  assert.match(
    serveHelp.stdout,
    /--port P +port to listen on \(default 8000, vLLM's; 0 = any free\)/,
  );
  const webHelp = await runCli("web/cli/web.ts", "--help");
  assert.match(webHelp.stdout, /--port N +port to listen on \(default 8100; 0 = any free\)/);
});
