import assert from "node:assert/strict";
import { join } from "node:path";
import { startServe } from "../serve/server-process.ts";
import { runInto, smokeConfig, tempFolder } from "./support.ts";

/** A port nothing listens on (taken, then released). */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

const turnsOf = (events: Awaited<ReturnType<typeof runInto>>["events"]) =>
  events.flatMap((e) =>
    e.type === "turn.generated"
      ? [[e.data.step, e.data.phase, e.data.prompt, e.data.sample, e.data.turn, [
        ...e.data.responseTokens,
      ]]]
      : []
  );

Deno.test("a server that is down, then dies mid-run: the run fails naming the endpoint, and resumes to the local backend's tokens once it is back", async () => {
  await using tmp = await tempFolder();
  const port = freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const config = smokeConfig(join(tmp.root, "served.sqlite"), {
    backend: "openai",
    endpoints: [endpoint],
    adapter_dir: tmp.adapters,
    timeout_s: 60,
  });
  const down = await runInto(config, "flaky");
  assert.ok(down.error, "the run failed");
  assert.match(down.error.message, new RegExp(`rollout endpoint ${endpoint}/v1/load_lora_adapter`));
  assert.match(down.error.message, /could not load adapter solver-v0 .*cannot be reached/);
  const failed = down.events.at(-1)!;
  assert.equal(failed.type, "run.failed");
  assert.match(
    String((failed.data as { error: { message: string } }).error.message),
    /127\.0\.0\.1/,
  );

  // Back, then killed during step 1's rollout.
  const serve = () =>
    startServe("--model", "embedded", "--lora-dir", tmp.adapters, "--port", String(port));
  {
    await using server = await serve();
    const killed = await runInto(config, "flaky", {
      resume: true,
      onProgress: (p) => {
        if (p.step === 1 && p.stage === "rollout") server.stop();
      },
    });
    assert.ok(killed.error, "the run failed when its server died");
    assert.match(killed.error.message, new RegExp(`rollout endpoint ${endpoint}/v1/completions`));
    assert.equal(killed.events.at(-1)!.type, "run.failed");
  }
  await using _back = await serve();
  const resumed = await runInto(config, "flaky", { resume: true });
  assert.equal(resumed.error, null, String(resumed.error));
  assert.equal(resumed.events.at(-1)!.type, "run.completed");
  const local = await runInto(smokeConfig(join(tmp.root, "local.sqlite")), "local");
  assert.deepEqual(turnsOf(resumed.events), turnsOf(local.events));
});

Deno.test("a server that refuses the adapter (no --lora-dir): the run fails naming the endpoint and the server's reason", async () => {
  await using tmp = await tempFolder();
  await using server = await startServe("--model", "embedded");
  const r = await runInto(
    smokeConfig(join(tmp.root, "refused.sqlite"), {
      backend: "openai",
      endpoints: [server.url],
      adapter_dir: tmp.adapters,
    }),
    "refused",
  );
  assert.ok(r.error);
  assert.match(
    r.error.message,
    new RegExp(
      `rollout endpoint ${server.url}/v1/load_lora_adapter: could not load adapter solver-v0`,
    ),
  );
  assert.match(r.error.message, /HTTP 403: .*--lora-dir/);
  assert.equal(r.events.at(-1)!.type, "run.failed");
});

Deno.test("a server that does not answer within timeout_s fails the run naming it; the API key of api_key_env goes as a bearer token", async () => {
  await using tmp = await tempFolder();
  const seen: (string | null)[] = [];
  // Takes every request, says nothing for 5 s: a hung server.
  await using hung = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      seen.push(req.headers.get("authorization"));
      await new Promise((resolve) => setTimeout(resolve, 5000));
      return new Response("{}");
    },
  );
  const endpoint = `http://127.0.0.1:${hung.addr.port}`;
  Deno.env.set("POLYRL_TEST_ROLLOUT_KEY", "sk-test-123");
  try {
    const r = await runInto(
      smokeConfig(join(tmp.root, "hung.sqlite"), {
        backend: "openai",
        endpoints: [endpoint],
        adapter_dir: tmp.adapters,
        timeout_s: 0.5,
        api_key_env: "POLYRL_TEST_ROLLOUT_KEY",
      }),
      "hung",
    );
    assert.ok(r.error);
    assert.match(
      r.error.message,
      new RegExp(
        `rollout endpoint ${endpoint}/v1/load_lora_adapter: .*no answer within ` +
          "rollout.timeout_s = 0.5 s",
      ),
    );
    assert.equal(r.events.at(-1)!.type, "run.failed");
    assert.ok(seen.length > 0 && seen.every((h) => h === "Bearer sk-test-123"), String(seen));
  } finally {
    Deno.env.delete("POLYRL_TEST_ROLLOUT_KEY");
  }
});

Deno.test("api_key_env naming a variable that is not set fails the run at its start, saying so", async () => {
  await using tmp = await tempFolder();
  const r = await runInto(
    smokeConfig(join(tmp.root, "nokey.sqlite"), {
      backend: "openai",
      endpoints: ["http://127.0.0.1:9"],
      adapter_dir: tmp.adapters,
      api_key_env: "POLYRL_TEST_UNSET_KEY",
    }),
    "nokey",
  );
  assert.ok(r.error);
  assert.match(
    r.error.message,
    /rollout.api_key_env names POLYRL_TEST_UNSET_KEY, which is not set/,
  );
  assert.equal(r.events.at(-1)!.type, "run.failed");
});
