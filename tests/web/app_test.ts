import assert from "node:assert/strict";
import { openStore } from "../../events/mod.ts";
import { fromWire } from "../../web/components/wire-json.ts";
import type { RunCharts } from "../../web/data/run-charts.ts";
import {
  dashboardApp,
  dashboardRun,
  type DashboardRunSpec,
  RUNS,
} from "./fixtures/dashboard-store.ts";
import { fakeRunEvents, writeFakeRun } from "../support/fake-run.ts";

/** The events a dashboard run of the store was written with. */
const eventsOf = (spec: DashboardRunSpec) => [...fakeRunEvents(dashboardRun(spec))].flat();

const text = async (r: Response) => {
  const body = await r.text();
  return { status: r.status, body };
};

Deno.test("runs page lists every run with status, estimator, steps and latest avg@16", async () => {
  await using d = await dashboardApp();
  const { status, body } = await text(await d.app.request("/"));
  assert.equal(status, 200);
  for (const id of Object.keys(RUNS)) assert.match(body, new RegExp(`href="/runs/${id}"`));
  assert.match(body, /data-island="runs-table"/);
  assert.match(body, /<span class="status running">running<\/span>/);
  assert.match(body, /dr-mas/);
  // grpo-s1's last evaluation (step 5): the mean of c / n over its problems.
  const evaluations = eventsOf(RUNS["grpo-s1"]).flatMap((e) =>
    e.type === "evaluation.completed" ? [e.data] : []
  );
  assert.deepEqual(evaluations.map((e) => e.step), [2, 5]);
  const { problems } = evaluations[1];
  const avg = problems.reduce((s, p) => s + p.c / p.n, 0) / problems.length;
  assert.ok(body.includes(`>${Number(avg.toPrecision(4))}<`), `avg@16 ${avg} shown`);
});

Deno.test("run page: charts per worker group with spike and non-finite markers", async () => {
  await using d = await dashboardApp();
  const { status, body } = await text(await d.app.request("/runs/grpo-s1"));
  assert.equal(status, 200);
  assert.match(body, /data-island="run-live"/);
  assert.match(body, /Evaluations/);
  assert.match(body, /data-trajectory="rollout-s5-p0-k0"/);
  // Timeline: both worker groups loaded and offloaded once in every one of the 6 steps, so off
  // the device at each step's end.
  assert.equal(body.match(/<rect class="off moved"/g)?.length, 12);
  assert.match(
    body,
    /step 5 wg-solver: loaded 1×, offloaded 1×; off gpu:0 \(4096 bytes\) at the step's end/,
  );
  const res = await d.app.request("/api/runs/grpo-s1/charts");
  const { charts } = fromWire<{ charts: RunCharts }>(await res.text());
  const labels = charts["grad-wg"].series.map((s) => s.label).sort();
  assert.deepEqual(labels, [
    "wg-critic",
    "wg-critic non-finite",
    "wg-solver",
    "wg-solver spike",
  ]);
  const spike = charts["grad-wg"].series.find((s) => s.label === "wg-solver spike")!;
  assert.deepEqual(spike.y.flatMap((y, i) => (y === null ? [] : [charts["grad-wg"].x[i]])), [4]);
  const nonFinite = charts["grad-wg"].series.find((s) => s.label === "wg-critic non-finite")!;
  assert.deepEqual(nonFinite.y.flatMap((y, i) => (y === null ? [] : [charts["grad-wg"].x[i]])), [
    5,
  ]);
  assert.deepEqual(charts["grad-agent"].series.map((s) => s.label).sort(), [
    "critic",
    "critic non-finite",
    "solver",
    "solver spike",
  ]);
  assert.equal(charts.reward.x.length, 6);
  // Critic baseline is r/2 + 1/4 over the same rewards: sigma_k = sigma/2, mu_k - mu = 1/4 - mu/2,
  // so each prompt group's Lemma 4.2 multiplier is 1/4 + (1/4 - mu/2)^2 / sigma^2 when sigma > 0.
  const lemma = charts.lemma.series.find((s) => s.label === "critic")!;
  assert.ok(lemma.y.some((m) => m !== null && m > 0.25));
  const solver = charts.lemma.series.find((s) => s.label === "solver")!;
  // The solver's own baseline is the global one, so its multiplier is exactly 1 at every step
  // that has one; there must be such steps, or the loop below checks nothing.
  const solverMultipliers = solver.y.filter((m): m is number => m !== null);
  assert.ok(solverMultipliers.length >= 3, `solver multipliers: ${solver.y}`);
  for (const m of solverMultipliers) assert.ok(Math.abs(m - 1) < 1e-9, `multiplier ${m}`);
});

Deno.test("trajectory browser pages through a step's trajectories with every turn", async () => {
  await using d = await dashboardApp();
  const { body } = await text(await d.app.request("/runs/grpo-s1?step=2&page=0"));
  const shown = [...body.matchAll(/data-trajectory="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(shown, [
    "rollout-s2-p0-k0",
    "rollout-s2-p0-k1",
    "rollout-s2-p0-k2",
    "rollout-s2-p0-k3",
    "rollout-s2-p1-k0",
    "rollout-s2-p1-k1",
    "rollout-s2-p1-k2",
    "rollout-s2-p1-k3",
  ]);
  assert.match(body, /page 1 of 1 \(8 trajectories\)/);
  // Each trajectory shows a solver and a critic turn with reward and advantage cells.
  assert.equal(body.match(/<td>solver<\/td>/g)?.length, 8);
  assert.equal(body.match(/<td>critic<\/td>/g)?.length, 8);
  // Texts come from the store's turn.generated events.
  assert.equal(
    body.match(/<td class="text">(solver|critic) says (42|41|nothing)<\/td>/g)?.length,
    16,
  );
  const unknown = await d.app.request("/runs/nope");
  assert.equal(unknown.status, 404);
});

Deno.test("compare page: mean ± SEM by estimator, vs baseline with CI and p, pairwise", async () => {
  await using d = await dashboardApp();
  const q = "/compare?runs=grpo-s1,grpo-s2,drmas-s1,drmas-s2&by=estimator&baseline=grpo";
  const { status, body } = await text(await d.app.request(q));
  assert.equal(status, 200, body.slice(0, 500));
  assert.match(body, /mean ± SEM/);
  assert.match(body, /Difference vs baseline grpo/);
  // Two seeds a side, the same two: a Welch CI and a paired CI on every benchmark and the average.
  assert.equal(body.match(/<td class="num">\[-?[\d.]+, -?[\d.]+\]<\/td>/g)?.length, 4);
  assert.match(body, /<th>paired 95% CI<\/th>/);
  // What else differs between the groups is said, and each comparison's confounds.
  assert.match(body, /What else differs between the groups/);
  assert.match(body, /<th>confounded by<\/th>/);
  const one = await d.app.request("/compare?runs=grpo-s1,drmas-s1,drmas-s2&by=estimator");
  assert.match(await one.text(), /n\/a \(one run\)/); // one grpo seed: no Welch test
  assert.match(body, /Pairwise/);
  assert.match(body, /data-island="chart-set"/);
  const bad = await d.app.request("/compare?runs=grpo-s1,missing&by=estimator");
  assert.equal(bad.status, 400);
  assert.match(await bad.text(), /no run missing/);
});

Deno.test("SQL endpoint runs read-only queries and refuses writes", async () => {
  await using d = await dashboardApp();
  const post = (sql: string) =>
    d.app.request("/api/sql", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sql }),
    });
  const ok = await post("SELECT count(*) AS n FROM turns WHERE run_id = 'grpo-s1'");
  assert.equal(ok.status, 200);
  const turnsOf = (spec: DashboardRunSpec) =>
    eventsOf(spec).filter((e) => e.type === "turn.generated").length;
  // 6 steps of 2 prompts x 4 samples x 2 agents, and 2 evaluations of as many.
  assert.equal(turnsOf(RUNS["grpo-s1"]), 8 * 2 * 4 * 2);
  assert.deepEqual(fromWire<{ rows: unknown[][] }>(await ok.text()).rows, [[
    turnsOf(RUNS["grpo-s1"]),
  ]]);
  for (
    const write of [
      "DELETE FROM turns",
      "DROP TABLE turns",
      "CREATE TABLE x (a INT)",
      "EXPLAIN ANALYZE UPDATE evals SET c = n",
    ]
  ) {
    const r = await post(write);
    assert.equal(r.status, 403, write);
  }
  const copy = await post("COPY (SELECT * FROM runs) TO '/tmp/polyrl-web-leak.csv'");
  assert.equal(copy.status, 403);
  // A SELECT cannot read server files either: DuckDB is confined to the export folder.
  const leak = await post("SELECT * FROM read_csv('/etc/passwd')");
  assert.equal(leak.status, 400);
  assert.match(await leak.text(), /file system operations are disabled/);
  const after = await post("SELECT count(*) FROM turns");
  assert.equal(after.status, 200);
  // Queries run on a read-only copy, taken again once new events are projected.
  {
    await using store = await openStore(d.path);
    await writeFakeRun(store, dashboardRun({ ...RUNS["live-s3"], steps: 4, fromStep: 3 }));
  }
  const grown = await post("SELECT count(*) FROM turns WHERE run_id = 'live-s3'");
  const grownTurns = turnsOf(RUNS["live-s3"]) +
    turnsOf({ ...RUNS["live-s3"], steps: 4, fromStep: 3 });
  assert.deepEqual(fromWire<{ rows: unknown[][] }>(await grown.text()).rows, [[grownTurns]]);
  assert.equal((await post("SELECT 1; SELECT 2")).status, 400);
});

Deno.test("file routes serve fixed files only: no path traversal", async () => {
  await using d = await dashboardApp();
  assert.equal((await d.app.request("/static/uplot.css")).status, 200);
  const parquet = await d.app.request("/data/grad_steps.parquet");
  assert.equal(parquet.status, 200);
  assert.equal(new TextDecoder().decode((await parquet.arrayBuffer()).slice(0, 4)), "PAR1");
  for (
    const path of [
      "/static/../deno.json",
      "/static/..%2F..%2Fdeno.json",
      "/static/%2e%2e/%2e%2e/deno.json",
      "/static/duckdb/../../../../etc/passwd",
      "/data/..%2Fevents.sqlite",
      "/data/projection_state.parquet",
      "/data/runs.parquet%00.sqlite",
      "/data/..%2F..%2Fdeno.csv",
      "/islands/..%2F..%2Fdeno.json",
      "/islands/../server/app.tsx",
      "/islands/run-live.ts",
    ]
  ) {
    const r = await d.app.request(path);
    assert.equal(r.status, 404, path);
    const body = await r.text();
    assert.ok(!body.includes('"imports"') && !body.includes("root:"), path);
  }
});

Deno.test("live feed: SSE from the store subscription delivers steps appended after render", async () => {
  await using d = await dashboardApp();
  const { position } = fromWire<{ position: number }>(
    await (await d.app.request("/api/runs/live-s3/charts")).text(),
  );
  const stop = new AbortController();
  const res = await d.app.request(`/runs/live-s3/events?from=${position + 1}`, {
    signal: stop.signal,
  });
  assert.equal(res.headers.get("content-type"), "text/event-stream");
  {
    await using store = await openStore(d.path);
    await writeFakeRun(
      store,
      dashboardRun({ ...RUNS["live-s3"], steps: 4, fromStep: 3, complete: true }),
    );
  }
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes('"status":"completed"')) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += value;
  }
  stop.abort();
  await reader.cancel();
  const ids = [...seen.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  assert.ok(ids.length > 10 && ids[0] === position + 1, `first id ${ids[0]} after ${position}`);
  assert.match(seen, /"step":3/);
  assert.match(seen, /"chart":"grad-wg"/);
  // The store itself is untouched by the dashboard: only the test's appends are in it.
  await using store = await openStore(d.path);
  assert.equal(await store.lastPosition(), ids.at(-1));
});
