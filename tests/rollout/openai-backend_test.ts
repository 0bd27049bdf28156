import assert from "node:assert/strict";
import { join } from "node:path";
import { startServe } from "../serve/server-process.ts";
import { runCli } from "../support/run-cli.ts";
import {
  compareTurns,
  completionProxy,
  MAX_TOKENS,
  runInto,
  smokeConfig,
  tempFolder,
} from "./support.ts";

Deno.test("the smoke preset on two deno task serve processes samples the local backend's tokens", async () => {
  await using tmp = await tempFolder();
  await using a = await startServe("--model", "embedded", "--lora-dir", tmp.adapters);
  await using b = await startServe("--model", "embedded", "--lora-dir", tmp.adapters);
  // Counting proxies in front of each: both servers must take turns.
  await using toA = completionProxy(a.url);
  await using toB = completionProxy(b.url);
  const local = await runInto(smokeConfig(join(tmp.root, "local.sqlite")), "local");
  assert.equal(local.error, null);
  const served = await runInto(
    smokeConfig(join(tmp.root, "served.sqlite"), {
      backend: "openai",
      endpoints: [toA.url, toB.url],
      adapter_dir: tmp.adapters,
    }),
    "served",
  );
  assert.equal(served.error, null, String(served.error));
  const { servedTurns, largest } = compareTurns(local.events, served.events);
  const lengths = servedTurns.map((t) => t.responseTokens.length);
  assert.ok(lengths.some((n) => n < MAX_TOKENS), `no turn ended early: ${lengths}`);
  assert.equal(toA.completions + toB.completions, servedTurns.length);
  assert.ok(toA.completions > 0 && toB.completions > 0, `${toA.completions} / ${toB.completions}`);
  // Episodes run concurrently: more than one request at a time reached a server.
  assert.ok(Math.max(toA.peak, toB.peak) > 1, `peaks ${toA.peak} / ${toB.peak}`);
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
  console.log(`${toA.completions} + ${toB.completions} completions;`);
  console.log(`${servedTurns.length} turns equal; largest logprob difference ${largest}`);
  assert.ok(largest < 1e-3, `logprobs differ by ${largest}`);

  // Replayed without the servers (stopped first): re-sampled with the keyed draws, then with the
  // recorded turns as given; every event regenerates identically either way.
  await a.stop();
  await b.stop();
  const store = join(tmp.root, "served.sqlite");
  const keyed = await runCli("engine/cli/replay.ts", "served", "--store", store);
  assert.equal(keyed.code, 0, keyed.stderr);
  assert.match(keyed.stdout, /rollouts: keyed, re-sampled in-process/);
  assert.match(keyed.stdout, /identical through step 1/);
  const given = await runCli(
    "engine/cli/replay.ts",
    "served",
    "--store",
    store,
    "--rollouts",
    "recorded",
  );
  assert.equal(given.code, 0, given.stderr);
  assert.match(given.stdout, /rollouts: recorded, the log's turns taken as given/);
  assert.match(given.stdout, /identical through step 1/);
  console.log(keyed.stdout);
});
