import assert from "node:assert/strict";
import { join } from "node:path";
import { startServe } from "../serve/server-process.ts";
import { MAX_TOKENS, runInto, smokeConfig, tempFolder } from "./support.ts";

Deno.test("the smoke preset on two deno task serve processes samples the local backend's tokens", async () => {
  await using tmp = await tempFolder();
  await using a = await startServe("--model", "embedded", "--lora-dir", tmp.adapters);
  await using b = await startServe("--model", "embedded", "--lora-dir", tmp.adapters);
  const local = await runInto(smokeConfig(join(tmp.root, "local.sqlite")), "local");
  assert.equal(local.error, null);
  const served = await runInto(
    smokeConfig(join(tmp.root, "served.sqlite"), {
      backend: "openai",
      endpoints: [a.url, b.url],
      adapter_dir: tmp.adapters,
    }),
    "served",
  );
  assert.equal(served.error, null, String(served.error));
  const turns = (events: typeof local.events) =>
    events.flatMap((e) => e.type === "turn.generated" ? [e.data] : []);
  const localTurns = turns(local.events);
  const servedTurns = turns(served.events);
  assert.equal(servedTurns.length, localTurns.length);
  let largest = 0;
  for (const [i, t] of servedTurns.entries()) {
    const { logprobs, ...rest } = t;
    const { logprobs: localLogprobs, ...localRest } = localTurns[i];
    assert.deepEqual(rest, localRest, `turn ${i}`);
    for (let j = 0; j < logprobs.length; j++) {
      largest = Math.max(largest, Math.abs(logprobs[j] - localLogprobs[j]));
    }
  }
  const lengths = servedTurns.map((t) => t.responseTokens.length);
  assert.ok(lengths.some((n) => n < MAX_TOKENS), `no turn ended early: ${lengths}`);
  // Both servers hold the groups' last adapters, and only those (each earlier one was unloaded).
  for (const server of [a, b]) {
    const models = (await (await server.get("/v1/models")).json()).data.map((m: { id: string }) =>
      m.id
    );
    assert.deepEqual(models.sort(), ["embedded", "solver-v2", "verifier-v2"]);
  }
  assert.deepEqual((await Array.fromAsync(Deno.readDir(tmp.adapters))).map((e) => e.name).sort(), [
    "solver-v2",
    "verifier-v2",
  ]);
  console.log(`${servedTurns.length} turns equal; largest logprob difference ${largest}`);
  assert.ok(largest < 1e-3, `logprobs differ by ${largest}`);
});
