/**
 * Many readers on one store at once, while a writer appends: two real `deno task web` processes
 * and the real `sql`, `report` and `export` tasks in further processes, each on its own
 * READ_ONLY generation of the projections, all seeing the events appended meanwhile. Also: the
 * lock lets one process make a generation while others wait for it, a lock holder that dies
 * (SIGKILL) frees it, a crashed projector's temporary files are ignored and then removed, a
 * damaged newest generation and a deleted folder are built again, `sql --rebuild` works while
 * dashboards hold older generations, and a dashboard moves to a new generation at most once per
 * interval.
 */
import assert from "node:assert/strict";
import { type NewEvent, openStore } from "../../events/mod.ts";
import { analysisPath } from "../../analysis/queries/analysis-path.ts";
import { type Analysis, openAnalysis } from "../../analysis/queries/open-analysis.ts";
import { listGenerations } from "../../analysis/queries/generation-files.ts";
import { openDashboardSource } from "../../web/server/dashboard-source.ts";
import { type RunningDashboard, startDashboard } from "../security/web-server.ts";
import { runCli } from "../support/run-cli.ts";
import { runSpec } from "./fixtures/fill-store.ts";
import { writeFakeRun } from "../support/fake-run.ts";

/** A store in a fresh temp dir holding the given runs; `append` adds more from this process. */
async function storeWith(...runIds: string[]) {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-readers-" });
  const path = `${dir}/events.sqlite`;
  const append = async (...ids: string[]) => {
    await using store = await openStore<NewEvent>(path);
    let events = 0;
    for (const runId of ids) {
      events += (await writeFakeRun(store, runSpec({ runId, steps: 1 }))).length;
    }
    return events;
  };
  await append(...runIds);
  const dispose = () => Deno.remove(dir, { recursive: true });
  return { dir, path, folder: analysisPath(path), append, [Symbol.asyncDispose]: dispose };
}

const runCount = async (path: string, ...flags: string[]) => {
  const r = await runCli(
    "analysis/cli/sql.ts",
    "SELECT count(*) AS n FROM runs",
    "--store",
    path,
    "--format",
    "csv",
    ...flags,
  );
  assert.equal(r.code, 0, r.stderr);
  return Number(r.stdout.split("\n")[1]);
};

/** The dashboard's answer to `SELECT count(*) FROM runs` on its SQL endpoint. */
async function dashboardRunCount(web: RunningDashboard): Promise<number> {
  const res = await fetch(`${web.url}/api/sql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ sql: "SELECT count(*) FROM runs" }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return JSON.parse(text).rows[0][0];
}

async function runsPage(web: RunningDashboard): Promise<string> {
  const res = await fetch(`${web.url}/`);
  const text = await res.text();
  assert.equal(res.status, 200, text.slice(0, 300));
  return text;
}

Deno.test("two dashboards and the sql, report and export tasks read one store while it grows", async (t) => {
  await using s = await storeWith("run-a", "run-b");
  await using one = await startDashboard(s.path);
  await using two = await startDashboard(s.path);
  assert.match(await runsPage(one), /run-a[\s\S]*run-b|run-b[\s\S]*run-a/);
  assert.match(await runsPage(two), /run-a/);

  await t.step("sql, report and export run while both dashboards are up", async () => {
    assert.equal(await runCount(s.path), 2);
    const report = await runCli("analysis/cli/report.ts", "--store", s.path, "--format", "json");
    assert.equal(report.code, 0, report.stderr);
    assert.ok(JSON.parse(report.stdout));
    const out = `${s.dir}/export`;
    const exported = await runCli(
      "analysis/cli/export.ts",
      "run-a",
      "--store",
      s.path,
      "--out",
      out,
    );
    assert.equal(exported.code, 0, exported.stderr);
    assert.match(exported.stdout, /runs\.parquet\t1 rows/);
  });

  await t.step("events appended meanwhile reach both dashboards and a new task", async () => {
    await s.append("run-c");
    // A dashboard's first read after an append waits for its next generation: no polling.
    assert.match(await runsPage(one), /run-c/);
    assert.match(await runsPage(two), /run-c/);
    assert.equal(await dashboardRunCount(one), 3);
    assert.equal(await dashboardRunCount(two), 3);
    assert.equal(await runCount(s.path), 3);
  });

  await t.step("a crashed projector's temporary files are ignored, then removed", async () => {
    const leftover = `${s.folder}/tmp-${crypto.randomUUID()}.duckdb`;
    await Deno.writeTextFile(leftover, "half a DuckDB file");
    await Deno.writeTextFile(`${leftover}.wal`, "its WAL");
    // Nothing new in the log: the task reads the newest generation and writes nothing.
    assert.equal(await runCount(s.path), 3);
    const listed = await listGenerations(s.folder);
    assert.deepEqual(
      listed.temporary,
      [leftover, `${leftover}.wal`].sort(),
      JSON.stringify(listed),
    );
    await s.append("run-d");
    assert.equal(await runCount(s.path), 4);
    const after = await listGenerations(s.folder);
    assert.deepEqual(after.temporary, [], "the leftovers are removed by the next projector");
    assert.deepEqual(after.superseded, [], "older generations are unlinked");
  });

  await t.step("sql --rebuild while the dashboards hold older generations", async () => {
    const before = (await listGenerations(s.folder)).newest!.seq;
    assert.equal(await runCount(s.path, "--rebuild"), 4);
    assert.equal((await listGenerations(s.folder)).newest!.seq, before + 1);
    assert.match(await runsPage(one), /run-d/);
    assert.equal(await dashboardRunCount(two), 4);
  });

  for (const web of [one, two]) {
    const { code, stderr } = await web.stop();
    assert.equal(code, 0, stderr);
  }
});

Deno.test("readers at once: one makes the next generation, the others wait and read it", async () => {
  await using s = await storeWith("run-a");
  await (await openAnalysis(s.path)).close();
  const first = (await listGenerations(s.folder)).newest!.seq;
  const appended = await s.append("run-b");
  const readers = await Promise.all([1, 2, 3].map(() => openAnalysis(s.path)));
  try {
    const { newest, superseded } = await listGenerations(s.folder);
    assert.equal(newest!.seq, first + 1, "one new generation, not one per reader");
    assert.deepEqual(superseded, []);
    assert.deepEqual(new Set(readers.map((a) => a.path)), new Set([newest!.path]));
    assert.deepEqual(readers.map((a) => a.caughtUp.events).sort(), [0, 0, appended]);
    for (const a of readers) {
      const rows = (await a.conn.runAndReadAll("SELECT count(*) FROM runs")).getRows();
      assert.equal(Number(rows[0][0]), 2);
      await assert.rejects(() => a.conn.run("DELETE FROM projection_state"), /read-only/i);
    }
  } finally {
    for (const a of readers) await a.close();
  }
});

Deno.test("a projector waits for the lock holder and goes on once it dies", async () => {
  await using s = await storeWith("run-a");
  await (await openAnalysis(s.path)).close();
  const first = (await listGenerations(s.folder)).newest!.seq;
  // Another process holds the folder's lock, as a projector does while it builds a generation.
  const holder = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `const f = await Deno.open(${JSON.stringify(`${s.folder}/lock`)}, { write: true });
       await f.lock(true);
       console.log("locked");
       setInterval(() => {}, 1000);`,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = holder.stdout.pipeThrough(new TextDecoderStream()).getReader();
  assert.match((await lines.read()).value ?? "", /locked/);
  await s.append("run-b");
  let opened = false;
  const opening = openAnalysis(s.path).then((a) => (opened = true, a));
  // Three seconds: this store is projected in well under one.
  await new Promise((r) => setTimeout(r, 3000));
  assert.equal(opened, false, "the log moved on: the reader waits for the lock to project it");
  const held = await listGenerations(s.folder);
  assert.deepEqual([held.newest!.seq, held.temporary], [first, []], "nothing built meanwhile");
  // Killed, the holder never unlocks: the kernel drops its lock with the process.
  holder.kill("SIGKILL");
  await holder.status;
  await lines.cancel();
  await using a = await opening;
  const rows = (await a.conn.runAndReadAll("SELECT count(*) FROM runs")).getRows();
  assert.equal(Number(rows[0][0]), 2);
  assert.equal((await listGenerations(s.folder)).newest!.seq, first + 1);
});

Deno.test("a damaged newest generation is rebuilt from the log, with the reason", async () => {
  await using s = await storeWith("run-a");
  await (await openAnalysis(s.path)).close();
  const { newest } = await listGenerations(s.folder);
  await Deno.writeTextFile(newest!.path, "not a DuckDB file");
  await using a = await openAnalysis(s.path);
  assert.match(a.caughtUp.rebuiltBecause ?? "", /newest generation .* could not be opened/);
  assert.equal(a.caughtUp.from, 0);
  const rows = (await a.conn.runAndReadAll("SELECT run_id FROM runs")).getRows();
  assert.deepEqual(rows, [["run-a"]]);
  assert.deepEqual((await listGenerations(s.folder)).superseded, []);
});

Deno.test("projections deleted under a running dashboard are built again on its next read", async () => {
  await using s = await storeWith("run-a");
  await using source = await openDashboardSource(s.path, { generationIntervalMs: 0 });
  await Deno.remove(s.folder, { recursive: true });
  await s.append("run-b");
  const runs = await source.read(async (a) =>
    (await a.conn.runAndReadAll("SELECT run_id FROM runs ORDER BY 1")).getRows()
  );
  assert.deepEqual(runs, [["run-a"], ["run-b"]]);
  assert.equal((await listGenerations(s.folder)).newest!.seq, 1);
});

Deno.test("the dashboard moves to a new generation at most once per interval", async () => {
  await using s = await storeWith("run-a");
  const interval = 1500;
  const opening = Date.now();
  await using source = await openDashboardSource(s.path, { generationIntervalMs: interval });
  const count = async (a: Analysis) =>
    Number((await a.conn.runAndReadAll("SELECT count(*) FROM runs")).getRows()[0][0]);
  const first = (await listGenerations(s.folder)).newest!.seq;
  const [position] = await source.read(async (a, p) => [p, await count(a)]);
  await s.append("run-b");
  // The log moved on within the interval: the read waits for the rest of it, then sees run-b.
  const [moved, runs] = await source.read(async (a, p) => [p, await count(a)]);
  assert.ok(Date.now() - opening >= interval, "the read waited out the interval");
  assert.ok(moved > position, `${moved} > ${position}`);
  assert.equal(runs, 2);
  assert.equal((await listGenerations(s.folder)).newest!.seq, first + 1);
  // An unchanged log costs no new generation and no wait (a minute's interval is never waited).
  const quiet = await openDashboardSource(s.path, { generationIntervalMs: 60_000 });
  try {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("a read of an unchanged log waited")), 30_000);
    });
    const read = quiet.read(async (a, p) => [p, await count(a)]);
    assert.deepEqual(await Promise.race([read, waited]), [moved, 2]);
    clearTimeout(timer);
    assert.equal((await listGenerations(s.folder)).newest!.seq, first + 1);
  } finally {
    await quiet.close();
  }
  // User SQL reads the same generation as the pages.
  const lease = await source.lease();
  const conn = await lease.connect();
  try {
    const rows = (await conn.runAndReadAll("SELECT count(*) FROM runs")).getRows();
    assert.equal(Number(rows[0][0]), 2);
    await assert.rejects(() => conn.run("SELECT * FROM read_csv('/etc/passwd')"), /disabled/);
  } finally {
    conn.closeSync();
    lease.release();
  }
});
