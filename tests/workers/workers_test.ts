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
  workersConfigFile,
} from "./support.ts";

const ignore = !POSTGRES_URL;

async function events(url: string, runId: string): Promise<StoredEvent<NewEvent>[]> {
  await using store = await openStore(url, { readOnly: true });
  const out: StoredEvent<NewEvent>[] = [];
  for await (const e of store.readStream(runId)) out.push(e as StoredEvent<NewEvent>);
  return out;
}

const schemaOf = (url: string) => new URL(url).searchParams.get("schema")!;

/** `deno task train` in a subprocess; its exit code and output. */
const train = (...args: string[]) => runCli("engine/cli/train.ts", ...args);

/**
 * A run on workers logged the local run's events: same ids, order and types; payloads equal but
 * for the config, the rollout logprobs (float rounding of other batches: within 1e-3) and what
 * compares them with the trainer's (`oldLogprobDrift`; with servers, `rolloutMismatch`): every
 * update (losses, norms, parameter hashes) is the local run's bit for bit.
 */
function assertLocalRun(
  logged: readonly StoredEvent<NewEvent>[],
  local: readonly StoredEvent<NewEvent>[],
  sampledBy: "servers" | "workers",
): void {
  assert.deepEqual(logged.map((e) => [e.version, e.type]), local.map((e) => [e.version, e.type]));
  let largest = 0;
  for (const [i, e] of logged.entries()) {
    const l = local[i];
    if (e.type === "run.started") continue;
    if (e.type === "turn.generated" && l.type === "turn.generated") {
      const { logprobs, ...rest } = e.data;
      const { logprobs: localLogprobs, ...localRest } = l.data;
      assert.deepEqual(rest, localRest, `turn event ${e.version}`);
      logprobs.forEach((v, j) => largest = Math.max(largest, Math.abs(v - localLogprobs[j])));
      continue;
    }
    if (e.type === "gradient_step.applied" && l.type === "gradient_step.applied") {
      const { rolloutMismatch, oldLogprobDrift, ...rest } = e.data;
      const { oldLogprobDrift: localDrift, ...localRest } = l.data;
      assert.equal(rolloutMismatch !== undefined, sampledBy === "servers", "rolloutMismatch");
      assert.ok(Math.abs(oldLogprobDrift! - localDrift!) < 1e-4, `${oldLogprobDrift}`);
      assert.deepEqual(rest, localRest, `update event ${e.version}`);
      continue;
    }
    assert.deepEqual(e.data, l.data, `${e.type} event ${e.version}`);
  }
  console.log(`${logged.length} events equal; largest logprob difference ${largest}`);
  assert.ok(largest < 1e-3, `logprobs differ by ${largest}`);
}

/** Both workers played episodes, each episode once. */
async function assertPlayedByTwo(url: string): Promise<void> {
  const played = await query<{ worker: string; n: string }>(
    `SELECT worker, count(*) AS n FROM ${schemaOf(url)}_rollouts.played_episodes GROUP BY worker`,
  );
  console.log(played);
  assert.equal(played.length, 2, `episodes by worker: ${JSON.stringify(played)}`);
}

Deno.test({
  name: "a trainer, two workers and two servers log the local backend's run of the smoke preset",
  ignore,
  async fn() {
    await using tmp = await tempFolder();
    await using pgStore = postgresStore();
    await using a = await startServe("--model", "embedded", "--lora-dir", tmp.adapters);
    await using b = await startServe("--model", "embedded", "--lora-dir", tmp.adapters);
    // tis_cap 0: the updates use the trainer's own logprobs alone, as a local run's do.
    const config = await workersConfigFile(tmp, [a.url, b.url], { tis_cap: 0 });
    await using w1 = await startWorker(pgStore.url, "--concurrency", "2");
    await using w2 = await startWorker(pgStore.url, "--concurrency", "2");
    const trained = await train("--config", config, "--run-id", "workers", "--store", pgStore.url);
    assert.equal(trained.code, 0, trained.stderr);

    const local = await runInto(smokeConfig(join(tmp.root, "local.sqlite")), "local");
    assert.equal(local.error, null);
    assertLocalRun(await events(pgStore.url, "workers"), local.events, "servers");
    await assertPlayedByTwo(pgStore.url);

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

/**
 * A proxy in front of `target` that holds each completion `delayMs` before passing it on, until
 * told to hurry.
 */
function slowProxy(target: string, delayMs: number) {
  let inFlight = 0;
  let delay = delayMs;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    const body = req.method === "POST" ? await req.text() : undefined;
    if (path !== "/v1/completions") {
      return fetch(target + path, { method: req.method, headers: req.headers, body });
    }
    inFlight++;
    try {
      await new Promise((resolve) => setTimeout(resolve, delay));
      const res = await fetch(target + path, { method: "POST", headers: req.headers, body });
      return new Response(await res.text(), { status: res.status, headers: res.headers });
    } finally {
      inFlight--;
    }
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    get inFlight() {
      return inFlight;
    },
    /** Passes completions on at once from now on. */
    hurry() {
      delay = 0;
    },
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

Deno.test({
  name: "a worker SIGKILLed in the middle of a step: another plays its episodes, nothing twice",
  ignore,
  async fn() {
    await using tmp = await tempFolder();
    await using pgStore = postgresStore();
    await using server = await startServe("--model", "embedded", "--lora-dir", tmp.adapters);
    await using slow = slowProxy(server.url, 1500);
    const config = await workersConfigFile(tmp, [slow.url]);
    await using doomed = await startWorker(pgStore.url, "--concurrency", "2");
    await using trainer = spawn(
      "engine/cli/train.ts",
      "--config",
      config,
      "--run-id",
      "killed",
      "--store",
      pgStore.url,
    );
    // The doomed worker holds step 0's episodes: its first turns are at the server.
    while (slow.inFlight === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    doomed.kill("SIGKILL");
    // Held only to catch the doomed worker mid-episode: the rescuer's turns need no holding.
    slow.hurry();
    assert.equal((await doomed.status).signal, "SIGKILL");
    assert.doesNotMatch(doomed.stdout(), /^played/m, "the doomed worker finished an episode");
    const killedAt = Date.now();
    await using rescuer = await startWorker(pgStore.url, "--concurrency", "2");
    await rescuer.waitFor(/^played killed rollout step 0/m);
    console.log(`step 0 played again ${(Date.now() - killedAt) / 1000} s after the kill`);
    const status = await trainer.status;
    assert.equal(status.code, 0, trainer.stderr());
    rescuer.kill();
    await rescuer.status;

    // The rescuer played step 0's episodes, each job on its second attempt.
    assert.match(rescuer.stdout(), /played killed rollout step 0 prompt 0 sample 0/);
    assert.match(rescuer.stdout(), /played killed rollout step 0 prompt 0 sample 1/);
    const jobs = await query<{ sample: number; retry_count: number; state: string }>(
      `SELECT (data->>'sample')::int AS sample, retry_count, state FROM ${schemaOf(pgStore.url)}` +
        `_rollouts.job WHERE data->>'phase' = 'rollout' AND (data->>'step')::int = 0 ORDER BY 1`,
    );
    assert.deepEqual(jobs.map((j) => [j.sample, j.state]), [[0, "completed"], [1, "completed"]]);
    assert.ok(jobs.every((j) => j.retry_count >= 1), JSON.stringify(jobs));

    const logged = await events(pgStore.url, "killed");
    assert.equal(new Set(logged.map((e) => e.id)).size, logged.length);
    const trajectories = logged.flatMap((e) =>
      e.type === "trajectory.completed" && e.data.phase === "rollout" ? [e.data.trajectory] : []
    );
    assert.deepEqual(trajectories, [
      "rollout-s0-p0-k0",
      "rollout-s0-p0-k1",
      "rollout-s1-p0-k0",
      "rollout-s1-p0-k1",
    ]);
    assert.equal(logged.at(-1)?.type, "run.completed");
    const verify = await runCli("events/cli/verify.ts", "--store", pgStore.url);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
  },
});

Deno.test({
  name:
    "a worker's server that is down or refuses the adapter fails the run naming it; resume ends it",
  ignore,
  async fn() {
    await using tmp = await tempFolder();
    await using pgStore = postgresStore();
    await using server = await startServe("--model", "embedded", "--lora-dir", tmp.adapters);
    // A second server the trainer never publishes to: it has no adapter of the run.
    await using other = await startServe("--model", "embedded", "--lora-dir", tmp.adapters);
    const config = await workersConfigFile(tmp, [server.url]);
    const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const down = `http://127.0.0.1:${(closed.addr as Deno.NetAddr).port}`;
    closed.close();

    await using w1 = await startWorker(pgStore.url, "--endpoints", down);
    const first = await train("--config", config, "--run-id", "flaky", "--store", pgStore.url);
    assert.equal(first.code, 1, first.stderr);
    assert.match(
      first.stderr,
      new RegExp(
        `rollout step 0 prompt 0 sample \\d failed on rollout workers after 3 attempts: ` +
          `rollout endpoint ${down}/v1/completions: cannot be reached`,
      ),
    );
    assert.match(w1.stderr(), new RegExp(`failed flaky rollout step 0 .*${down}`));
    w1.kill();
    await w1.status;

    await using w2 = await startWorker(pgStore.url, "--endpoints", other.url);
    const second = await train("--resume", "flaky", "--store", pgStore.url);
    assert.equal(second.code, 1, second.stderr);
    assert.match(
      second.stderr,
      new RegExp(`rollout endpoint ${other.url}/v1/completions: HTTP 404`),
    );
    assert.match(second.stderr, /solver-v0/);
    w2.kill();
    await w2.status;

    await using w3 = await startWorker(pgStore.url);
    const third = await train("--resume", "flaky", "--store", pgStore.url);
    assert.equal(third.code, 0, third.stderr);
    for (const r of [first, second]) console.log(r.stderr.match(/^error: .*$/m)?.[0]);
    w3.kill();
    await w3.status;
    const logged = await events(pgStore.url, "flaky");
    // run.failed is keyed by its step: the second failure at step 0 is not logged again.
    const failed = logged.flatMap((e) => e.type === "run.failed" ? [e.data] : []);
    assert.deepEqual(failed.map((f) => [f.step, f.stage, f.error.name]), [
      [0, "rollout", "RolloutWorkerError"],
    ]);
    assert.match(failed[0].error.message, new RegExp(`rollout endpoint ${down}/v1/completions`));
    assert.equal(logged.at(-1)?.type, "run.completed");
    const verify = await runCli("events/cli/verify.ts", "--store", pgStore.url);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
  },
});

Deno.test({
  name: "a trainer SIGKILLed after a step's rollouts resumes with the episodes the workers played",
  ignore,
  async fn() {
    await using tmp = await tempFolder();
    await using pgStore = postgresStore();
    await using server = await startServe("--model", "embedded", "--lora-dir", tmp.adapters);
    const config = await workersConfigFile(tmp, [server.url]);
    await using w = await startWorker(pgStore.url, "--concurrency", "2");
    const trainer = spawn(
      "engine/cli/train.ts",
      "--config",
      config,
      "--run-id",
      "cut",
      "--store",
      pgStore.url,
    );
    // Killed once step 0's turns are in the log, before the run's first checkpoint.
    for (;;) {
      const logged = await events(pgStore.url, "cut").catch(() => []);
      if (logged.some((e) => e.type === "turn.generated")) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    trainer.kill("SIGKILL");
    await trainer.status;
    const before = await events(pgStore.url, "cut");
    assert.ok(!before.some((e) => e.type === "run.completed"));
    const resumed = await train("--resume", "cut", "--store", pgStore.url);
    assert.equal(resumed.code, 0, resumed.stderr);
    w.kill();
    await w.status;

    // The resumed steps took the turns already played: no episode was played twice, and the
    // events logged before the kill are the resumed run's own, unchanged.
    const plays = w.stdout().match(/^played cut .*$/gm) ?? [];
    assert.equal(
      new Set(plays.map((l) => l.replace(/:.*/, ""))).size,
      plays.length,
      plays.join("\n"),
    );
    assert.doesNotMatch(w.stdout(), /already played/);
    const after = await events(pgStore.url, "cut");
    assert.deepEqual(after.slice(0, before.length).map((e) => e.hash), before.map((e) => e.hash));
    assert.equal(after.at(-1)?.type, "run.completed");
    const verify = await runCli("events/cli/verify.ts", "--store", pgStore.url);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    const replay = await runCli("engine/cli/replay.ts", "cut", "--store", pgStore.url);
    assert.equal(replay.code, 0, replay.stdout + replay.stderr);
    assert.match(replay.stdout, /identical through step 1/);
  },
});

Deno.test({
  name:
    "two workers sampling locally with the trainer's weights log the local run of the smoke preset",
  ignore,
  async fn() {
    await using tmp = await tempFolder();
    await using pgStore = postgresStore();
    const config = await smokeConfigFile(tmp.root, { backend: "local", dispatch: "workers" });
    await using w1 = await startWorker(pgStore.url, "--concurrency", "2");
    await using w2 = await startWorker(pgStore.url, "--concurrency", "2");
    const trained = await train(
      "--config",
      config,
      "--run-id",
      "local-workers",
      "--store",
      pgStore.url,
    );
    assert.equal(trained.code, 0, trained.stderr);
    const local = await runInto(smokeConfig(join(tmp.root, "local.sqlite")), "local");
    assert.equal(local.error, null);
    assertLocalRun(await events(pgStore.url, "local-workers"), local.events, "workers");
    await assertPlayedByTwo(pgStore.url);
    const verify = await runCli("events/cli/verify.ts", "--store", pgStore.url);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    const replay = await runCli("engine/cli/replay.ts", "local-workers", "--store", pgStore.url);
    assert.equal(replay.code, 0, replay.stdout + replay.stderr);
    assert.match(replay.stdout, /rollouts: keyed/);
    assert.match(replay.stdout, /identical through step 1/);
    w1.kill();
    w2.kill();
    assert.equal((await w1.status).code, 0, w1.stderr());
    assert.equal((await w2.status).code, 0, w2.stderr());
  },
});
