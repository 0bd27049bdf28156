/**
 * Rollout workers over Postgres, as real processes: `deno task train` with rollout.dispatch
 * "workers", `deno task worker` processes and `deno task serve` processes on 127.0.0.1, the store
 * a fresh schema on the test Postgres server.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type NewEvent, openStore, type StoredEvent } from "../../events/mod.ts";
import { startServe } from "../serve/server-process.ts";
import { runCli } from "../support/run-cli.ts";
import { runInto, smokeConfig, tempFolder } from "../rollout/support.ts";
import {
  POSTGRES_URL,
  postgresStore,
  query,
  smokeConfigFile,
  spawn,
  startWorker,
} from "./support.ts";

const ignore = !POSTGRES_URL;

async function events(url: string, runId: string): Promise<StoredEvent<NewEvent>[]> {
  await using store = await openStore(url, { readOnly: true });
  const out: StoredEvent<NewEvent>[] = [];
  for await (const e of store.readStream(runId)) out.push(e as StoredEvent<NewEvent>);
  return out;
}

/** `deno task train` in a subprocess; its exit code and output. */
const train = (...args: string[]) => runCli("engine/cli/train.ts", ...args);

Deno.test({
  name: "a trainer, two workers and two servers log the local backend's run of the smoke preset",
  ignore,
  async fn() {
    await using tmp = await tempFolder();
    await using pgStore = postgresStore();
    await using a = await startServe("--model", "embedded", "--lora-dir", tmp.adapters);
    await using b = await startServe("--model", "embedded", "--lora-dir", tmp.adapters);
    // tis_cap 0: the updates use the trainer's own logprobs alone, as a local run's do.
    const rollout = {
      backend: "openai",
      dispatch: "workers",
      endpoints: [a.url, b.url],
      adapter_dir: tmp.adapters,
      tis_cap: 0,
    };
    const config = await smokeConfigFile(tmp.root, rollout);
    await using w1 = await startWorker(pgStore.url, "--concurrency", "2");
    await using w2 = await startWorker(pgStore.url, "--concurrency", "2");
    const trained = await train("--config", config, "--run-id", "workers", "--store", pgStore.url);
    assert.equal(trained.code, 0, trained.stderr);

    const local = await runInto(smokeConfig(join(tmp.root, "local.sqlite")), "local");
    assert.equal(local.error, null);
    const logged = await events(pgStore.url, "workers");
    // Every event at the same place with the same id and type; payloads equal but for the
    // config, the servers' logprobs (float rounding of other batches) and the mismatch record.
    assert.deepEqual(
      logged.map((e) => [e.version, e.type]),
      local.events.map((e) => [e.version, e.type]),
    );
    let largest = 0;
    for (const [i, e] of logged.entries()) {
      const l = local.events[i];
      if (e.type === "run.started") continue;
      if (e.type === "turn.generated" && l.type === "turn.generated") {
        const { logprobs, ...rest } = e.data;
        const { logprobs: localLogprobs, ...localRest } = l.data;
        assert.deepEqual(rest, localRest, `turn event ${e.version}`);
        logprobs.forEach((v, j) => largest = Math.max(largest, Math.abs(v - localLogprobs[j])));
        continue;
      }
      if (e.type === "gradient_step.applied" && l.type === "gradient_step.applied") {
        // What measures the rollout logprobs against the trainer's differs; the update (its
        // losses, norms and resulting parameter hash) is the local run's bit for bit.
        const { rolloutMismatch, oldLogprobDrift, ...rest } = e.data;
        const { oldLogprobDrift: localDrift, ...localRest } = l.data;
        assert.ok(rolloutMismatch, "the servers' logprobs were compared with the trainer's");
        assert.ok(Math.abs(oldLogprobDrift! - localDrift!) < 1e-4, `${oldLogprobDrift}`);
        assert.deepEqual(rest, localRest, `update event ${e.version}`);
        continue;
      }
      assert.deepEqual(e.data, l.data, `${e.type} event ${e.version}`);
    }
    console.log(`${logged.length} events equal; largest logprob difference ${largest}`);
    assert.ok(largest < 1e-3, `logprobs differ by ${largest}`);
    // Both workers played; every episode once.
    const played = await query<{ worker: string; n: string }>(
      `SELECT worker, count(*) AS n FROM ${new URL(pgStore.url).searchParams.get("schema")}` +
        "_rollouts.played_episodes GROUP BY worker",
    );
    console.log(played);
    assert.equal(played.length, 2, `episodes by worker: ${JSON.stringify(played)}`);

    const verify = await runCli("events/cli/verify.ts", "--store", pgStore.url);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    const replay = await runCli("engine/cli/replay.ts", "workers", "--store", pgStore.url);
    assert.equal(replay.code, 0, replay.stdout + replay.stderr);
    assert.match(replay.stdout, /identical through step 1/);
    w1.kill();
    w2.kill();
    assert.equal((await w1.status).code, 0, w1.stderr());
    assert.equal((await w2.status).code, 0, w2.stderr());
  },
});
