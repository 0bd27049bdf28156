import assert from "node:assert/strict";
import { join } from "node:path";
import { startServe } from "../serve/server-process.ts";
import { runCli } from "../support/run-cli.ts";
import { completionProxy, runInto, smokeConfig, tempFolder } from "./support.ts";

/**
 * Changes the last sampled token of a completion (id + 1): a server whose tokens the keyed draws
 * do not reproduce, as vLLM's or SGLang's.
 */
// deno-lint-ignore no-explicit-any
const changeLastToken = (choice: any) => {
  const ids: number[] = choice.token_ids;
  if (ids.length > 0) ids[ids.length - 1] = (ids[ids.length - 1] + 1) % 200;
};

Deno.test("a run on a server without keyed draws: keyed replay names the first turn that differs, recorded replay re-executes it identically", async () => {
  await using tmp = await tempFolder();
  await using server = await startServe("--model", "embedded", "--lora-dir", tmp.adapters);
  await using proxy = completionProxy(server.url, changeLastToken);
  const store = join(tmp.root, "other.sqlite");
  const run = await runInto(
    smokeConfig(store, {
      backend: "openai",
      endpoints: [proxy.url],
      adapter_dir: tmp.adapters,
      max_in_flight: 1,
    }, { steps: 1 }),
    "other",
  );
  assert.equal(run.error, null, String(run.error));
  assert.equal(proxy.peak, 1, "max_in_flight 1: one request at a time");
  const keyed = await runCli("engine/cli/replay.ts", "other", "--store", store);
  assert.equal(keyed.code, 1, keyed.stderr);
  assert.match(keyed.stdout, /rollouts: keyed/);
  assert.match(keyed.stdout, /first divergent event #\d+ turn\.generated step=0/);
  const given = await runCli(
    "engine/cli/replay.ts",
    "other",
    "--store",
    store,
    "--rollouts",
    "recorded",
    "--format",
    "json",
  );
  assert.equal(given.code, 0, given.stderr);
  const report = JSON.parse(given.stdout);
  assert.equal(report.rollouts, "recorded");
  assert.equal(report.rolloutBackend, "openai");
  assert.equal(report.identicalRun, true);
  assert.equal(report.identicalThrough, 0);
});

Deno.test("replay --rollouts takes keyed or recorded only", async () => {
  const r = await runCli(
    "engine/cli/replay.ts",
    "latest",
    "--rollouts",
    "vllm",
    "--store",
    ":memory-none:",
  );
  assert.equal(r.code, 2, r.stdout);
  assert.match(r.stderr, /--rollouts must be keyed or recorded; got vllm/);
});
