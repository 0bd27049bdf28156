/**
 * `deno task worker`'s command line, and the config checks of rollout.dispatch: help, usage
 * mistakes (exit 2), a store it cannot reach (exit 1), and configs refused before a run starts.
 */
import assert from "node:assert/strict";
import { ConfigError, mergeConfig, parseConfig, presetInput } from "../../engine/config/mod.ts";
import { PgBoss } from "pg-boss";
import { queueLocation } from "../../engine/workers/episode-queue.ts";
import { runCli } from "../support/run-cli.ts";
import { POSTGRES_URL, postgresStore, startWorker } from "./support.ts";

const worker = (...args: string[]) => runCli("engine/cli/worker.ts", ...args);

Deno.test("worker --help lists every flag and exits 0", async () => {
  const r = await worker("--help");
  assert.equal(r.code, 0);
  for (const flag of ["--store postgres://URL", "--endpoints URL", "--concurrency N", "--help"]) {
    assert.ok(r.stdout.includes(flag), flag);
  }
});

Deno.test("worker usage mistakes exit 2 naming the fix", async () => {
  const cases: [string[], RegExp][] = [
    [[], /--store is required/],
    [["--store", "runs.sqlite"], /workers need a postgres:\/\/ URL/],
    [
      ["--store", "postgres://127.0.0.1/x", "--concurrency", "0"],
      /--concurrency 0: expected a whole number from 1 to 256/,
    ],
    [
      ["--store", "postgres://127.0.0.1/x", "--endpoints", "ftp://h"],
      /--endpoints ftp:\/\/h: expected an http/,
    ],
    [["--store", "postgres://127.0.0.1/x", "extra"], /unexpected argument extra/],
    [["--store", "postgres://127.0.0.1/x", "--bogus"], /bogus/],
  ];
  for (const [args, message] of cases) {
    const r = await worker(...args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.match(r.stderr, /^usage: deno task worker/m);
  }
});

Deno.test("a worker whose Postgres cannot be reached exits 1 saying why, password hidden", async () => {
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (closed.addr as Deno.NetAddr).port;
  closed.close();
  const r = await worker("--store", `postgres://postgres:secret@127.0.0.1:${port}/lab`);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`connection refused at 127.0.0.1:${port}`));
  assert.doesNotMatch(r.stderr, /secret/);
});

Deno.test("rollout.dispatch workers is refused without a Postgres store", () => {
  const parse = (rollout: Record<string, unknown>, store: string) =>
    parseConfig(mergeConfig(presetInput("smoke"), { rollout, store }));
  const served = {
    backend: "openai",
    endpoints: ["http://127.0.0.1:8000"],
    adapter_dir: "/tmp/a",
  };
  for (const rollout of [{ dispatch: "workers" }, { ...served, dispatch: "workers" }]) {
    assert.throws(
      () => parse(rollout, "runs.sqlite"),
      (err) =>
        err instanceof ConfigError &&
        /store.*a postgres:\/\/ URL with rollout.dispatch "workers"/s.test(err.message),
    );
    assert.equal(parse(rollout, "postgres://127.0.0.1/lab").rollout?.dispatch, "workers");
  }
  // Absent, configs hash as before: no dispatch key is added.
  assert.ok(!("dispatch" in parse(served, "runs.sqlite").rollout!));
});

Deno.test({
  name: "a worker refuses jobs that are not episodes or name no run, and goes on",
  ignore: !POSTGRES_URL,
  async fn() {
    await using store = postgresStore();
    await using worker = await startWorker(store.url);
    // Anyone who can write the queue's table can put anything there.
    const { connectionString, schema } = queueLocation(store.url);
    const boss = new PgBoss({ connectionString, schema, supervise: false, schedule: false });
    await boss.start();
    try {
      await boss.send("polyrl-episodes", { runId: "x", step: -1, extra: "<script>" });
      await boss.send("polyrl-episodes", {
        runId: "ghost",
        phase: "rollout",
        step: 0,
        prompt: 0,
        sample: 0,
        question: { id: "q", problem: "1+1", answer: "2" },
        models: {},
        weights: {},
      });
    } finally {
      await boss.stop({ graceful: false });
    }
    await worker.waitForErr(/^refused: job \S+ is not an episode: .*phase.*$/m);
    await worker.waitForErr(/^failed ghost rollout step 0 prompt 0 sample 0: .*no event store/m);
    worker.kill("SIGTERM");
    assert.equal((await worker.status).code, 0, worker.stderr());
  },
});
