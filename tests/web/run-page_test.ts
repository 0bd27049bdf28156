/**
 * The run page over a store holding every kind of run (tests/web/fixtures/mixed-store.ts): made
 * by the real trainer and evaluator, read through the real app with `app.request()`. Every page
 * renders; each says what the run is and how it ended; the evaluation-accuracy chart and the
 * trajectory browser (phases, filters) show what the log holds, checked against the log itself.
 */
import assert from "node:assert/strict";
import { type NewEvent, openStore, type StoredEvent } from "../../events/mod.ts";
import { applyUpdate, type ChartData } from "../../web/components/chart-data.ts";
import { fromWire } from "../../web/components/wire-json.ts";
import { liveMessage } from "../../web/data/live-updates.ts";
import type { RunCharts } from "../../web/data/run-charts.ts";
import { runCli } from "../support/run-cli.ts";
import { dashboardAppOver } from "./fixtures/dashboard-store.ts";
import { fillMixedStore, MIXED_FAILURE, MIXED_RUNS } from "./fixtures/mixed-store.ts";

const mixed = await fillMixedStore();
// One app for the whole file: each test reads, none appends.
const dash = await dashboardAppOver(mixed.path);
// Awaited after the last test: an async close in "unload" races the exit of the process, and
// DuckDB closed while the runtime tears down segfaulted it (exit 139).
Deno.test.afterAll(() => dash.close());

const get = async (url: string) => {
  const res = await dash.app.request(url);
  return { status: res.status, body: await res.text() };
};

/** The events of one run, read from the store itself (not through the projections). */
async function runEvents(runId: string): Promise<StoredEvent<NewEvent>[]> {
  await using store = await openStore(mixed.path, { readOnly: true });
  const out: StoredEvent<NewEvent>[] = [];
  for await (const e of store.readStream(runId)) out.push(e as StoredEvent<NewEvent>);
  return out;
}

/** The runs view's status of a run, as `deno task sql` would show it. */
const viewStatus = (runId: string) =>
  dash.source.read(async (a) => {
    const rows = await a.db.selectFrom("runs").select("status").where("run_id", "=", runId)
      .execute();
    assert.equal(rows.length, 1, `one runs row for ${runId}: ${JSON.stringify(rows)}`);
    return rows[0].status as string;
  });

const trajectoriesShown = (body: string) =>
  [...body.matchAll(/data-trajectory="([^"]+)"/g)].map((m) => m[1]);

Deno.test("run page: every run of a mixed store renders with the runs view's status", async () => {
  for (const runId of Object.values(MIXED_RUNS)) {
    const { status, body } = await get(`/runs/${runId}`);
    assert.equal(status, 200, `${runId}: ${body.slice(0, 300)}`);
    const shown = body.match(/<span class="status (\w+)" data-status="\1">/)?.[1];
    assert.equal(shown, await viewStatus(runId), runId);
    assert.match(body, /<h2 id="trajectories">Trajectories<\/h2>/);
  }
  const { body } = await get(`/runs/${MIXED_RUNS.completed}`);
  assert.match(body, /<span data-steps="2">2 of 2 steps done<\/span>/);
});

Deno.test("run page: a run in its first step shows its rollouts and empty states", async () => {
  const { body } = await get(`/runs/${MIXED_RUNS.firstStep}`);
  for (const chart of ["grad-wg", "grad-agent"]) {
    assert.match(
      body,
      new RegExp(`data-chart="${chart}" data-empty[^>]*>.*?no gradient steps yet`, "s"),
    );
  }
  assert.match(body, /data-chart="eval-accuracy" data-empty[^>]*>.*?no evaluation yet/s);
  assert.match(body, /No evaluation yet\./);
  // Step 0 is under way, not done (the page once said "1 step").
  assert.match(body, /<span data-steps="0">0 steps done<\/span>/);
  // Its rollouts are there: 2 prompts x 2 samples of step 0, each with a solver and a critic turn.
  assert.deepEqual(trajectoriesShown(body), [
    "rollout-s0-p0-k0",
    "rollout-s0-p0-k1",
    "rollout-s0-p1-k0",
    "rollout-s0-p1-k1",
  ]);
  assert.equal(body.match(/<td>critic<\/td>/g)?.length, 4);
});

Deno.test("run page: a failed run shows its error and the command that continues it", async () => {
  const { body } = await get(`/runs/${MIXED_RUNS.failed}`);
  assert.match(body, /data-run-state="failed"/);
  assert.ok(body.includes(`at step ${MIXED_FAILURE.step} (${MIXED_FAILURE.stage})`), body);
  assert.ok(body.includes(`${MIXED_FAILURE.error.name}: ${MIXED_FAILURE.error.message}`));
  assert.match(body, /<code data-resume[^>]*>deno task train --resume mixed-failed<\/code>/);
  // The command is the trainer's own: its usage names --resume RUN.
  const help = await runCli("engine/cli/train.ts", "--help");
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout + help.stderr, /--resume RUN/);
});

Deno.test("run page: a run whose writer was killed is interrupted, with the resume command", async () => {
  assert.equal(await viewStatus(MIXED_RUNS.dead), "interrupted");
  const { body } = await get(`/runs/${MIXED_RUNS.dead}`);
  assert.match(body, /data-run-state="interrupted"/);
  assert.match(body, /stopped without ending it/);
  assert.match(body, /<code data-resume[^>]*>deno task train --resume mixed-dead<\/code>/);
  // Its first step's gradient steps were logged before the kill: drawn, not empty.
  assert.doesNotMatch(body, /data-chart="grad-wg" data-empty/);
});

Deno.test("run page: a resumed run is one run with its two attempts", async () => {
  const { body } = await get(`/runs/${MIXED_RUNS.resumed}`);
  assert.match(body, /<span class="status completed" data-status="completed">/);
  assert.doesNotMatch(body, /data-run-state=/);
  const attempts = [...body.matchAll(/data-attempt="(\d)" data-status="([a-z]+)"/g)]
    .map((m) => [m[1], m[2]]);
  // Its first attempt was stopped with Ctrl-C: interrupted, not failed.
  assert.deepEqual(attempts, [["1", "interrupted"], ["2", "completed"]]);
  const failed = (await runEvents(MIXED_RUNS.resumed)).find((e) => e.type === "run.failed")!;
  assert.equal(failed.type, "run.failed");
  if (failed.type === "run.failed") {
    assert.ok(body.includes(`${failed.data.error.name}: ${failed.data.error.message}`));
  }
});

Deno.test("run page: an eval run shows its protocol and its evaluation trajectories", async () => {
  const { status, body } = await get(`/runs/${MIXED_RUNS.eval}`);
  assert.equal(status, 200);
  assert.match(body, /<span>kind<\/span>evaluation/);
  assert.match(body, /data-protocol="single"/);
  assert.doesNotMatch(body, /<span>workflow<\/span>/);
  assert.match(body, /href="\/runs\/mixed-completed">mixed-completed@1\/solver<\/a>/);
  assert.match(body, /<span>benchmarks<\/span>sums/);
  assert.doesNotMatch(body, /data-chart=/); // an eval run trains nothing: no training charts
  assert.doesNotMatch(body, /data-resume/);
  // 3 problems x n = 2 samples, each of benchmark sums, as the log has them.
  const logged = (await runEvents(MIXED_RUNS.eval)).flatMap((e) =>
    e.type === "trajectory.completed" ? [e.data.trajectory] : []
  );
  assert.equal(logged.length, 6);
  assert.match(body, /data-phase="eval"/);
  assert.deepEqual(trajectoriesShown(body), logged.toSorted());
  assert.equal(body.match(/ · sums problem sums\/\d/g)?.length, 6);
  // Each turn's text as the log holds it (HTML-escaped as the page writes text).
  const texts = (await runEvents(MIXED_RUNS.eval)).flatMap((e) =>
    e.type === "turn.generated" ? [e.data.text] : []
  );
  const escape = (t: string) => t.replaceAll("&", "&amp;").replaceAll("<", "&lt;");
  assert.ok(texts.length >= logged.length, `${texts.length} turns`);
  for (const t of texts) assert.ok(body.includes(`<td class="text">${escape(t)}</td>`), t);
  // Above each trajectory: the question the evaluator asked and its gold answer, as logged.
  for (const e of await runEvents(MIXED_RUNS.eval)) {
    if (e.type !== "trajectory.completed") continue;
    const { trajectory, question, gold } = e.data;
    assert.ok(question !== null && gold !== null, `${trajectory} records question and gold`);
    const block = body.slice(body.indexOf(`data-trajectory="${trajectory}"`));
    const task = block.slice(0, block.indexOf("<table"));
    assert.ok(task.includes(`<dd data-field="question">${escape(question)}</dd>`), question);
    assert.ok(task.includes(`<dd data-field="gold">${escape(gold)}</dd>`), gold);
  }
});

Deno.test("run page: the evaluation-accuracy chart is avg@k and pass@k of each evaluated step", async () => {
  const res = await dash.app.request(`/api/runs/${MIXED_RUNS.completed}/charts`);
  const { charts } = fromWire<{ charts: RunCharts }>(await res.text());
  const chart = charts["eval-accuracy"];
  assert.deepEqual(chart.series.map((s) => s.label), ["validation avg@2", "validation pass@2"]);
  // avg@k from the log: the mean over problems of c/n at each evaluated step.
  const evals = (await runEvents(MIXED_RUNS.completed)).flatMap((e) =>
    e.type === "evaluation.completed" ? [e.data] : []
  );
  assert.deepEqual(chart.x, evals.map((e) => e.step));
  assert.deepEqual(chart.x, [0, 1]); // the fixture's config evaluates after every step
  const avg = evals.map((e) => e.problems.reduce((s, p) => s + p.c / p.n, 0) / e.problems.length);
  const drawn = chart.series[0].y;
  avg.forEach((v, i) => assert.ok(Math.abs((drawn[i] ?? NaN) - v) < 1e-12, `${drawn} vs ${avg}`));
  // pass@2 with n = 2: a problem counts when any of its two samples was right.
  const pass = evals.map((e) => e.problems.filter((p) => p.c > 0).length / e.problems.length);
  pass.forEach((v, i) => assert.ok(Math.abs((chart.series[1].y[i] ?? NaN) - v) < 1e-12));
  const { body } = await get(`/runs/${MIXED_RUNS.completed}`);
  assert.match(body, /data-chart="eval-accuracy"/);
  assert.doesNotMatch(body, /data-chart="eval-accuracy" data-empty/);
});

Deno.test("trajectory browser: validation trajectories of a training run, filtered by correct", async () => {
  const logged = (await runEvents(MIXED_RUNS.completed)).flatMap((e) =>
    e.type === "trajectory.completed" && e.data.phase === "eval" && e.data.step === 0
      ? [e.data]
      : []
  );
  assert.ok(logged.length > 0);
  const all = await get(`/runs/${MIXED_RUNS.completed}?phase=eval&step=0`);
  assert.equal(all.status, 200);
  assert.match(all.body, /data-phase="eval"/);
  assert.match(all.body, new RegExp(`data-total="${logged.length}"`));
  for (const [flag, want] of [["yes", true], ["no", false]] as const) {
    const ids = logged.filter((t) => t.correct === want).map((t) => t.trajectory);
    const r = await get(`/runs/${MIXED_RUNS.completed}?phase=eval&step=0&correct=${flag}`);
    assert.match(r.body, new RegExp(`data-total="${ids.length}"`), flag);
    assert.deepEqual(trajectoriesShown(r.body), ids.toSorted().slice(0, 8), flag);
  }
});

Deno.test("trajectory browser: the agent filter shows that agent's turns only", async () => {
  const { body } = await get(`/runs/${MIXED_RUNS.completed}?phase=rollout&step=1&agent=verifier`);
  assert.ok(body.match(/<td>verifier<\/td>/g)!.length > 0);
  assert.doesNotMatch(body, /<td>solver<\/td>/);
  assert.match(body, /<option value="verifier" selected>verifier<\/option>/);
});

Deno.test("trajectory browser: the reward filter keeps trajectories within its bounds", async () => {
  const logged = (await runEvents(MIXED_RUNS.failed)).flatMap((e) =>
    e.type === "reward.assigned" && e.data.agent === null && e.data.step === 1
      ? [[e.data.trajectory, e.data.total] as const]
      : []
  );
  const rewarded = logged.filter(([, r]) => r >= 1).map(([t]) => t);
  assert.ok(rewarded.length > 0 && rewarded.length < logged.length, "some rewards are 0");
  const { body } = await get(`/runs/${MIXED_RUNS.failed}?step=1&reward-min=1&reward-max=1`);
  assert.deepEqual(trajectoriesShown(body), rewarded.toSorted());
  assert.match(body, /matching trajectories/);
  assert.match(body, /clear filter/);
});

Deno.test("trajectory browser: a step without trajectories of the phase says so", async () => {
  // The first-step run has rollouts at step 0 but no evaluation at all.
  const none = await get(`/runs/${MIXED_RUNS.firstStep}?phase=eval`);
  assert.equal(none.status, 200);
  assert.match(none.body, /data-empty="trajectories"[^>]*>No evaluations yet\./);
  const far = await get(`/runs/${MIXED_RUNS.completed}?phase=rollout&step=99`);
  assert.equal(far.status, 200);
  assert.match(far.body, /Step 99 has no training rollouts; showing step 1\./);
  const past = await get(`/runs/${MIXED_RUNS.completed}?step=1&page=50`);
  assert.deepEqual(trajectoriesShown(past.body), []);
  const nothing = await get(
    `/runs/${MIXED_RUNS.completed}?phase=eval&step=0&agent=solver` +
      `&reward-min=5`,
  );
  assert.match(nothing.body, /data-empty="filter"/);
});

Deno.test("trajectory browser: bad parameters are refused with 400 naming the fix", async () => {
  const q = (name: string, value: string) => `bad parameter ${name}=&quot;${value}&quot;`;
  const cases: [string, string][] = [
    ["phase=test", `${q("phase", "test")}: expected one of rollout, eval`],
    ["correct=maybe", `${q("correct", "maybe")}: expected one of yes, no`],
    ["reward-min=abc", `${q("reward-min", "abc")}: expected a finite number`],
    ["reward-min=1e999", `${q("reward-min", "1e999")}: expected a finite number`],
    [
      "reward-min=2&reward-max=1",
      `${q("reward-max", "1")}: expected a number at least reward-min (2)`,
    ],
    ["step=-1", `${q("step", "-1")}: expected a whole number`],
    ["agent=nobody", `${q("agent", "nobody")}: expected an agent of this run (solver, verifier)`],
  ];

  for (const [query, message] of cases) {
    const r = await get(`/runs/${MIXED_RUNS.completed}?${query}`);
    assert.equal(r.status, 400, query);
    assert.ok(r.body.includes(message), `${query}: ${r.body.slice(-400)}`);
  }
  const hostile = await get(
    `/runs/${MIXED_RUNS.completed}?agent=${encodeURIComponent("<script>x")}`,
  );
  assert.equal(hostile.status, 400);
  assert.doesNotMatch(hostile.body, /<script>x/);
  const unknown = await get(`/runs/${encodeURIComponent("<script>alert(1)</script>")}`);
  assert.equal(unknown.status, 404);
  assert.doesNotMatch(unknown.body, /<script>alert/);
  assert.match(unknown.body, /There is no run &lt;script>alert\(1\)&lt;\/script> here/);
});

Deno.test("live feed: evaluations draw the evaluation-accuracy chart as a fresh load does", async () => {
  const res = await dash.app.request(`/api/runs/${MIXED_RUNS.completed}/charts`);
  const loaded = fromWire<{ charts: RunCharts }>(await res.text()).charts["eval-accuracy"];
  const live: ChartData = { ...loaded, x: [], series: [] };
  for (const e of await runEvents(MIXED_RUNS.completed)) {
    for (const u of liveMessage(e).updates) if (u.chart === "eval-accuracy") applyUpdate(live, u);
  }
  assert.deepEqual(live.x, loaded.x);
  assert.deepEqual(live.series.map((s) => s.label).sort(), loaded.series.map((s) => s.label));
  for (const s of loaded.series) {
    const y = live.series.find((l) => l.label === s.label)!.y;
    s.y.forEach((v, i) => assert.ok(Math.abs((y[i] ?? NaN) - (v ?? NaN)) < 1e-12, s.label));
  }
});
