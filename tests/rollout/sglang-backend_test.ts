/**
 * The openai rollout backend in SGLang's dialect (`rollout.engine: "sglang"`) against a real
 * `deno task serve` process, which answers SGLang's routes: the smoke preset's turns go to
 * `/generate` and its adapters to `/load_lora_adapter` / `/unload_lora_adapter` (no `/v1` route
 * is used), the run's turns equal a local-backend run's, and it replays both ways. A server that
 * refuses an adapter fails the run with an error naming the endpoint and the SGLang route.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startServe } from "../serve/server-process.ts";
import { runCli } from "../support/run-cli.ts";
import { compareTurns, completionProxy, runInto, smokeConfig, tempFolder } from "./support.ts";

Deno.test("the smoke preset in SGLang's dialect samples the local backend's tokens through /generate, and replays", async () => {
  await using tmp = await tempFolder();
  await using server = await startServe("--model", "embedded", "--lora-dir", tmp.adapters);
  await using proxy = completionProxy(server.url);
  const local = await runInto(smokeConfig(join(tmp.root, "local.sqlite")), "local");
  assert.equal(local.error, null);
  const store = join(tmp.root, "sglang.sqlite");
  const served = await runInto(
    smokeConfig(store, {
      backend: "openai",
      engine: "sglang",
      endpoints: [proxy.url],
      adapter_dir: tmp.adapters,
    }),
    "sglang",
  );
  assert.equal(served.error, null, String(served.error));
  const { servedTurns, largest } = compareTurns(local.events, served.events);
  assert.ok(largest < 1e-3, `logprobs differ by ${largest}`);
  // Only SGLang's routes: one /generate per turn; v0, v1, v2 of both LoRA groups loaded, each
  // preceded by a precautionary unload of its name, and v0, v1 unloaded after their successor.
  const routes = Object.fromEntries(proxy.routes);
  assert.deepEqual(routes, {
    "POST /generate": servedTurns.length,
    "POST /load_lora_adapter": 6,
    "POST /unload_lora_adapter": 6 + 4,
  });
  const loaded = await server.json("/load_lora_adapter", {
    lora_name: "probe",
    lora_path: join(tmp.adapters, "solver-v2"),
  });
  assert.deepEqual(Object.keys(loaded.body.loaded_adapters).sort(), [
    "probe",
    "solver-v2",
    "verifier-v2",
  ]);
  console.log(
    `${servedTurns.length} turns equal through /generate; largest logprob gap ${largest}`,
  );

  await server.stop();
  for (const mode of [[], ["--rollouts", "recorded"]]) {
    const replay = await runCli("engine/cli/replay.ts", "sglang", "--store", store, ...mode);
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(replay.stdout, /identical through step 1/);
  }
});

Deno.test("an SGLang-dialect server that refuses the adapter fails the run naming the endpoint and /load_lora_adapter", async () => {
  await using tmp = await tempFolder();
  // The server reads adapters from another folder than the run writes them to: it refuses them.
  const elsewhere = join(tmp.root, "served-adapters");
  await Deno.mkdir(elsewhere);
  await using server = await startServe("--model", "embedded", "--lora-dir", elsewhere);
  const run = await runInto(
    smokeConfig(join(tmp.root, "refused.sqlite"), {
      backend: "openai",
      engine: "sglang",
      endpoints: [server.url],
      adapter_dir: tmp.adapters,
    }),
    "refused",
  );
  assert.ok(run.error, "the run failed");
  assert.match(
    run.error.message,
    new RegExp(
      `rollout endpoint ${server.url}/load_lora_adapter: could not load adapter solver-v0`,
    ),
  );
  assert.match(run.error.message, /HTTP 400: .*"success":false.*outside the adapter folders/);
  assert.equal(run.events.at(-1)!.type, "run.failed");
});
