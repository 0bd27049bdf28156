/**
 * A run's status as a user sees it through the real CLIs (`runs`, `sql`, `train --resume`,
 * `verify`, `replay`) on real stores: a training process killed with SIGKILL is interrupted at
 * once (its lease names a dead process on this host), a resume is refused while the writer lives
 * and afterwards completes the same row, replay and verify are unchanged by leases and
 * annotations; a writer on another host is judged by its heartbeat; a failed-then-resumed run
 * is one row; tags and hiding are events that never touch a run's stream; turns carry their text.
 */
import assert from "node:assert/strict";
import {
  annotateRun,
  ANNOTATIONS_STREAM,
  LEASE_TIMEOUT_MS,
  type NewEvent,
  openStore,
} from "../../events/mod.ts";
import { runCli } from "../support/run-cli.ts";
import { fakeRunEvents } from "../support/fake-run.ts";
import { runSpec } from "./fixtures/fill-store.ts";

const RUNS = "analysis/cli/runs.ts";
const SQL = "analysis/cli/sql.ts";
const TRAIN = "engine/cli/train.ts";

async function tempDir(): Promise<string> {
  return await Deno.makeTempDir({ prefix: "polyrl-run-status-" });
}

/** A CLI's JSON output, after checking it exited 0. */
async function json<T = Record<string, unknown>[]>(script: string, ...args: string[]): Promise<T> {
  const r = await runCli(script, ...args);
  assert.equal(r.code, 0, `${script} ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

async function waitFor(what: string, check: () => Promise<boolean>, ms = 120_000) {
  const until = Date.now() + ms;
  while (!await check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

Deno.test({
  name:
    "a SIGKILLed training run is interrupted at once; a resume refused while it lives, then one row",
  sanitizeResources: false,
  async fn() {
    const dir = await tempDir();
    const store = `${dir}/events.sqlite`;
    const runId = "killed-1";
    // Stopped right after its lease, in its first step: the resume trains the rest.
    const steps = 4;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", TRAIN, "--preset", "smoke", "--steps", String(steps), "--device", "cpu"]
        .concat(["--run-id", runId, "--store", store]),
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      // The lease is taken right after run.started: from then on the run is "running".
      await waitFor("the writer's lease", async () => {
        try {
          await using s = await openStore(store, { readOnly: true });
          return (await s.leases()).some((l) => l.runId === runId && l.pid === child.pid);
        } catch {
          return false;
        }
      });
      // Stopped, the writer lives on (its pid holds the lease) but cannot finish the run while
      // the CLI calls below start: on a loaded 2-core machine a running writer once ended first.
      child.kill("SIGSTOP");
      const [live] = await json(RUNS, "--store", store, "--format", "json");
      assert.equal(live.status, "running");
      // The step under way is not done: a run in its step s has s steps done (of those asked for).
      const [progress] = await json(
        SQL,
        ...["--store", store, "--format", "json"],
        "SELECT last_step, steps, steps_done FROM runs",
      );
      assert.deepEqual(progress, {
        last_step: progress.last_step,
        steps,
        steps_done: progress.last_step ?? 0,
      });
      // A resume while the writer lives would be a second writer: refused, nothing appended.
      const clash = await runCli(TRAIN, "--resume", runId, "--store", store);
      assert.equal(clash.code, 1, clash.stderr);
      assert.match(clash.stderr, new RegExp(`still being written by process ${child.pid}`));
    } finally {
      child.kill("SIGKILL");
      await child.status;
    }
    const [dead] = await json(
      SQL,
      "--store",
      store,
      "--format",
      "json",
      "SELECT status, attempts, steps_done = coalesce(last_step, 0) AS done_before_last FROM runs",
    );
    assert.deepEqual(dead, { status: "interrupted", attempts: 1, done_before_last: true });

    const resumed = await runCli(TRAIN, "--resume", runId, "--store", store);
    assert.equal(resumed.code, 0, resumed.stderr);
    const rows = await json(RUNS, "--store", store, "--format", "json");
    assert.equal(rows.length, 1, "one row per run, resumed or not");
    assert.equal(rows[0].status, "completed");
    const [done] = await json(
      SQL,
      "--store",
      store,
      "--format",
      "json",
      "SELECT steps_done FROM runs",
    );
    assert.deepEqual(done, { steps_done: steps });
    // A kill writes no end event: the resume continues the attempt, and the log is the one an
    // uninterrupted run writes (tests/replay/resume_test.ts), not one with a marker in it.
    assert.equal(rows[0].attempts, 1);
    const attempts = await json(RUNS, "attempts", runId, "--store", store, "--format", "json");
    assert.deepEqual(attempts.map((a) => [a.attempt, a.status, a.host]), [[1, "completed", null]]);

    // The lease is outside the log: the hash chains verify and the run replays bit for bit.
    assert.equal((await runCli("events/cli/verify.ts", "--store", store)).code, 0);
    const replay = await runCli("engine/cli/replay.ts", runId, "--store", store);
    assert.equal(replay.code, 0, replay.stdout + replay.stderr);
    await Deno.remove(dir, { recursive: true });
  },
});

/** A generated run's events as one list, without its run.completed. */
function unfinished(runId: string): NewEvent[] {
  return [...fakeRunEvents(runSpec({ runId, steps: 3 }))].flat().filter((e) =>
    e.type !== "run.completed"
  );
}

Deno.test("another host's writer is judged by its heartbeat; a failed-then-resumed run is one row", async () => {
  const dir = await tempDir();
  const target = `${dir}/events.sqlite`;
  const store = await openStore(target);
  const now = Date.now();
  const lease = (runId: string, heartbeatAt: number, endedAt: number | null = null) =>
    store.putLease({
      runId,
      host: "another-host",
      pid: 1,
      startedAt: now - 1e6,
      heartbeatAt,
      endedAt,
    });
  for (const id of ["fresh", "stale", "released", "no-lease"]) {
    await store.append(id, unfinished(id));
  }
  await lease("fresh", now);
  await lease("stale", now - LEASE_TIMEOUT_MS - 5_000);
  await lease("released", now - 1_000, now - 1_000);
  // Failed at step 1, resumed, completed: run.failed sits between the two attempts' events.
  const events = unfinished("resumed");
  const cut = events.findIndex((e) => e.type === "step.started" && e.data.step === 1);
  await store.append("resumed", events.slice(0, cut));
  await store.append("resumed", [{
    type: "run.failed",
    data: { step: 1, stage: "rollout", error: { name: "RangeError", message: "out of memory" } },
  }]);
  await store.append("resumed", events.slice(cut));
  await store.append("resumed", [{ type: "run.completed", data: { steps: 3, metrics: {} } }]);
  await store.close();

  const rows = await json(
    SQL,
    "--store",
    target,
    "--format",
    "json",
    "SELECT run_id, status, attempts, error FROM runs ORDER BY run_id",
  );
  assert.deepEqual(rows, [
    { run_id: "fresh", status: "running", attempts: 1, error: null },
    { run_id: "no-lease", status: "running", attempts: 1, error: null },
    { run_id: "released", status: "interrupted", attempts: 1, error: null },
    { run_id: "resumed", status: "completed", attempts: 2, error: null },
    { run_id: "stale", status: "interrupted", attempts: 1, error: null },
  ]);
  const attempts = await json(
    SQL,
    "--store",
    target,
    "--format",
    "json",
    "SELECT attempt, status, failed_step, error, events FROM run_attempts " +
      "WHERE run_id = 'resumed' ORDER BY attempt",
  );
  assert.deepEqual(attempts.map((a) => [a.attempt, a.status, a.failed_step, a.error]), [
    [1, "failed", 1, "RangeError: out of memory"],
    [2, "completed", null, null],
  ]);
  assert.equal(
    (attempts[0].events as number) + (attempts[1].events as number),
    events.length + 2,
    "every event of the run belongs to exactly one attempt",
  );
  // The stale writer on another host renews its lease: running again, no event needed.
  const again = await openStore(target);
  await again.putLease({
    runId: "stale",
    host: "another-host",
    pid: 1,
    startedAt: now,
    heartbeatAt: Date.now(),
    endedAt: null,
  });
  await again.close();
  const [stale] = await json(
    SQL,
    "--store",
    target,
    "--format",
    "json",
    "SELECT status FROM runs WHERE run_id = 'stale'",
  );
  assert.equal(stale.status, "running");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("tags and hiding are events in their own stream; runs lists and filters by them", async () => {
  const dir = await tempDir();
  const target = `${dir}/events.sqlite`;
  const store = await openStore(target);
  for (const id of ["a", "b"]) {
    for (const batch of fakeRunEvents(runSpec({ runId: id }))) await store.append(id, batch);
  }
  const heads = new Map((await store.streams()).map((h) => [h.stream, h.version]));
  await store.close();
  const runs = (...args: string[]) => runCli(RUNS, ...args, "--store", target);

  assert.equal((await runs("tag", "a", "baseline", "seed-1")).code, 0);
  assert.match((await runs("tag", "a", "baseline")).stderr, /already tagged/);
  assert.equal((await runs("tag", "latest", "seed-1")).code, 0); // latest: b, started last
  const hid = await runs("hide", "b");
  assert.equal(hid.code, 0);
  assert.equal(hid.stdout.trim(), "hidden b"); // not "hided"
  assert.match((await runs("hide", "b")).stderr, /b: already hidden/);
  let listed = await json(RUNS, "--store", target, "--format", "json");
  assert.deepEqual(listed.map((r) => [r.run_id, r.tags, r.hidden]), [[
    "a",
    "baseline,seed-1",
    false,
  ]]);
  listed = await json(RUNS, "--all", "--tag", "seed-1", "--store", target, "--format", "json");
  assert.deepEqual(listed.map((r) => [r.run_id, r.hidden]), [["b", true], ["a", false]]);
  // Untag, then tag again: a new event each time (seq), the last one decides.
  assert.equal((await runs("untag", "a", "baseline")).code, 0);
  assert.deepEqual(
    await json(RUNS, "--tag", "baseline", "--store", target, "--format", "json"),
    [],
  );
  assert.equal((await runs("tag", "a", "baseline")).code, 0);
  assert.equal((await runs("unhide", "b")).code, 0);
  const csv = await runs("--format", "csv");
  assert.equal(csv.code, 0);
  assert.match(csv.stdout.split("\n")[0], /^run_id,status,attempts,/);
  assert.equal(csv.stdout.trim().split("\n").length, 3, "a header and both runs");

  await using reread = await openStore(target, { readOnly: true });
  const annotations: string[] = [];
  for await (const e of reread.readStream(ANNOTATIONS_STREAM)) {
    annotations.push(`${e.version} ${e.type} ${JSON.stringify(e.data)}`);
  }
  assert.equal(annotations.length, 7);
  assert.equal(annotations[5], '6 run.tagged {"runId":"a","seq":6,"tag":"baseline"}');
  // The runs' own streams are untouched, and the whole log still verifies.
  const runStreams = (await reread.streams()).filter((h) => h.stream !== ANNOTATIONS_STREAM);
  assert.deepEqual(runStreams.map((h) => h.stream).sort(), [...heads.keys()].sort());
  assert.equal(heads.size, 2);
  for (const h of runStreams) assert.equal(h.version, heads.get(h.stream));
  // The generated runs refer to checkpoint blobs they never stored: those are the only problems.
  const report = await reread.verify();
  assert.equal(report.events, [...heads.values()].reduce((a, b) => a + b, 0) + 7);
  assert.deepEqual([...new Set(report.problems.map((p) => p.kind))], ["blob-missing"]);

  // Mistakes are usage errors that name the fix; nothing is appended.
  const badTag = await runs("tag", "a", "has space");
  assert.equal(badTag.code, 2);
  assert.match(badTag.stderr, /tag.*expected 1 to 64 characters/);
  const unknown = await runs("hide", "nope");
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /no run nope; known runs \(newest first\): b, a/);
  assert.equal((await runs("tag", "a")).code, 2);
  assert.equal((await runs("frobnicate")).code, 2);
  assert.equal((await runs("hide", "a", "--status", "failed")).code, 2);
  assert.equal((await runs("--status", "sleeping")).code, 2);
  const help = await runCli(RUNS, "--help");
  assert.equal(help.code, 0);
  assert.match(help.stdout, /examples:\n {2}deno task runs/);
  assert.equal(await reread.streamVersion(ANNOTATIONS_STREAM), 7);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("annotateRun takes the next version when another writer took one first", async () => {
  const dir = await tempDir();
  await using store = await openStore(`${dir}/events.sqlite`);
  await Promise.all(
    ["x", "y", "z"].map((tag) => annotateRun(store, { type: "run.tagged", runId: "r", tag })),
  );
  const seqs: number[] = [];
  for await (const e of store.readStream(ANNOTATIONS_STREAM)) {
    seqs.push((e.data as { seq: number }).seq);
  }
  assert.deepEqual(seqs, [1, 2, 3]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("turns has the decoded text of each turn, as turn.generated logged it", async () => {
  const dir = await tempDir();
  const target = `${dir}/events.sqlite`;
  const store = await openStore(target);
  const texts = new Map<string, string>();
  for (const batch of fakeRunEvents(runSpec({ runId: "t" }))) {
    await store.append("t", batch);
    for (const e of batch) {
      if (e.type === "turn.generated") {
        texts.set(
          `${e.data.phase} ${e.data.step} ${e.data.prompt} ${e.data.sample} ${e.data.turn}`,
          e.data.text,
        );
      }
    }
  }
  await store.close();
  const rows = await json<{ k: string; text: string }[]>(
    SQL,
    "--store",
    target,
    "--format",
    "json",
    "SELECT concat_ws(' ', phase, step, prompt, sample, turn) AS k, text FROM turns",
  );
  assert.equal(rows.length, texts.size);
  assert.ok(texts.size > 0);
  for (const r of rows) assert.equal(r.text, texts.get(r.k));
  await Deno.remove(dir, { recursive: true });
});
