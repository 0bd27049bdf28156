/**
 * What the run page says of a real run (`train --preset smoke`, read through the real app with
 * `app.request()`) is what its log records (issue 34 item 6): each turn's own reward beside its
 * trajectory's, not the agent's mean over its turns; and the load/offload timeline over every
 * step of the run, also those without a move (a run that never offloads is loaded once, at
 * step 0, and stays on the device); rollout reward and accuracy each on a chart of its own, as a
 * page following the run live draws them.
 */
import assert from "node:assert/strict";
import { type NewEvent, openStore, type StoredEvent } from "../../events/mod.ts";
import { applyUpdate, type ChartData } from "../../web/components/chart-data.ts";
import { fromWire } from "../../web/components/wire-json.ts";
import { liveMessage } from "../../web/data/live-updates.ts";
import type { RunCharts } from "../../web/data/run-charts.ts";
import { runCli } from "../support/run-cli.ts";
import { dashboardAppOver } from "./fixtures/dashboard-store.ts";

const dir = await Deno.makeTempDir({ prefix: "polyrl-web-truth-" });
const path = `${dir}/events.sqlite`;
for (const [runId, ...set] of [["resident"], ["offloading", "runtime.offload_idle=true"]]) {
  const trained = await runCli(
    "engine/cli/train.ts",
    ...["--preset", "smoke", "--steps", "5", "--run-id", runId, "--store", path],
    ...set.flatMap((s) => ["--set", s]),
  );
  assert.equal(trained.code, 0, trained.stderr);
}
const dash = await dashboardAppOver(path, () => Deno.remove(dir, { recursive: true }));
// Awaited after the last test: an async close in "unload" races the exit of the process.
Deno.test.afterAll(() => dash.close());

const get = async (url: string) => {
  const res = await dash.app.request(url);
  assert.equal(res.status, 200, url);
  return await res.text();
};

async function logged(runId: string): Promise<StoredEvent<NewEvent>[]> {
  await using store = await openStore(path, { readOnly: true });
  const out: StoredEvent<NewEvent>[] = [];
  for await (const e of store.readStream(runId)) out.push(e as StoredEvent<NewEvent>);
  return out;
}

/** Each shown trajectory's block: from its opening tag to the next one's. */
const blocks = (body: string) =>
  new Map(
    body.split('<div class="trajectory"').slice(1).map((b) => [
      b.match(/data-trajectory="([^"]+)"/)![1],
      b,
    ]),
  );

/** A block's turn rows as [turn, agent, turn reward, trajectory reward]. */
const turnRewards = (block: string): [number, string, string, string][] =>
  [
    ...block.matchAll(
      /<tr><td class="num">(\d+)<\/td><td>([^<]+)<\/td>.*?<td class="num" data-turn-reward="true">([^<]+)<\/td><td class="num" data-trajectory-reward="true">([^<]+)<\/td>/g,
    ),
  ].map((m) => [Number(m[1]), m[2], m[3], m[4]]);

Deno.test("trajectory browser: each turn's own reward, its trajectory's beside it", async () => {
  const events = await logged("resident");
  const step0 = (type: string) =>
    events.filter((e) => e.type === type && "step" in e.data && e.data.step === 0);
  // The log: an agent with two turns of different rewards (0, then 0.1 less: an invalid action)
  // has its mean as its reward.assigned. The page must show the two, not the mean twice.
  const actions = step0("advantages.computed").flatMap((e) =>
    e.type === "advantages.computed" ? e.data.advantages : []
  );
  const trajectory = "rollout-s0-p0-k0";
  const own = actions.filter((a) => a.trajectory === trajectory).sort((a, b) => a.turn - b.turn);
  assert.deepEqual(own.map((a) => [a.turn, a.agent, a.reward]), [
    [0, "solver", 0],
    [1, "verifier", -0.1],
    [2, "solver", -0.1],
  ]);
  const assigned = step0("reward.assigned").flatMap((e) =>
    e.type === "reward.assigned" && e.data.trajectory === trajectory ? [e.data] : []
  );
  assert.deepEqual(
    assigned.map((r) => [r.agent, r.total]).sort(),
    [
      ["solver", -0.05],
      ["verifier", -0.1],
      [null, 0],
    ].sort(),
  );

  const block = blocks(await get("/runs/resident?step=0"))!.get(trajectory)!;
  assert.match(block, /· trajectory reward <span data-reward="true">0<\/span>/);
  assert.deepEqual(turnRewards(block), [
    [0, "solver", "0", "0"],
    [1, "verifier", "-0.1", "0"],
    [2, "solver", "-0.1", "0"],
  ]);
  // Every turn of the page as the log records it.
  const byTurn = new Map(actions.map((a) => [`${a.trajectory}/${a.turn}`, a.reward]));
  const shown = [...blocks(await get("/runs/resident?step=0"))].flatMap(([t, b]) =>
    turnRewards(b).map(([turn, , reward]) => [`${t}/${turn}`, reward] as const)
  );
  assert.equal(shown.length, actions.length);
  for (const [key, reward] of shown) assert.equal(reward, String(byTurn.get(key)), key);
  // Evaluations are not rewarded: their turns say so.
  const evaluation = [...blocks(await get("/runs/resident?phase=eval"))][0][1];
  for (const [, , reward, total] of turnRewards(evaluation)) {
    assert.deepEqual([reward, total], ["—", "—"]);
  }
});

/** The timeline's cells as "step wg class", and each cell's tooltip. */
const timeline = (body: string) => {
  const cells = [
    ...body.matchAll(
      /<rect class="([a-z ]+)" data-step="(\d+)" data-wg="([^"]+)"[^>]*><title>([^<]+)<\/title>/g,
    ),
  ];
  return {
    classes: cells.map((m) => `${m[2]} ${m[3]} ${m[1]}`),
    titles: cells.map((m) => m[4].replaceAll("&#39;", "'")),
  };
};

Deno.test("load/offload timeline: every step of a run, also those without a move", async () => {
  // The run never offloads: the trainer records one load per group, at step 0.
  const moves = (await logged("resident")).filter((e) => e.type.startsWith("worker_group."));
  assert.deepEqual(moves.map((e) => [e.type, "step" in e.data && e.data.step]), [
    ["worker_group.loaded", 0],
    ["worker_group.loaded", 0],
  ]);
  const body = await get("/runs/resident");
  assert.match(body, /Worker-group load\/offload timeline \(last 5 steps\)/);
  const { classes, titles } = timeline(body);
  assert.deepEqual(classes, [
    "0 solver on moved",
    "1 solver on",
    "2 solver on",
    "3 solver on",
    "4 solver on",
    "0 verifier on moved",
    "1 verifier on",
    "2 verifier on",
    "3 verifier on",
    "4 verifier on",
  ]);
  assert.equal(
    titles[0],
    "step 0 solver: loaded 1×, offloaded 0×; on cpu (4950016 bytes) at the step's end",
  );
  assert.equal(
    titles[4],
    "step 4 solver: not moved, on cpu (4950016 bytes) all step (loaded in step 0)",
  );
  assert.match(body, />step 0<\/text>/);
  assert.match(body, />step 4<\/text>/);

  // With offload_idle every group is offloaded and loaded again in each step.
  const offloading = timeline(await get("/runs/offloading"));
  assert.equal(offloading.classes.length, 10);
  for (const c of offloading.classes) assert.match(c, / on moved$/);
  assert.match(
    offloading.titles[3],
    /^step 3 solver: loaded 2×, offloaded 2×; on cpu \(\d+ bytes\)/,
  );
});

Deno.test("run charts: reward and accuracy apart, followed live as a fresh load draws them", async () => {
  const res = await dash.app.request("/api/runs/resident/charts");
  const { charts } = fromWire<{ charts: RunCharts }>(await res.text());
  const events = await logged("resident");
  for (const [name, label] of [["reward", "reward"], ["accuracy", "accuracy"]]) {
    const loaded = charts[name];
    assert.deepEqual(loaded.series.map((s) => s.label), [label], name);
    assert.deepEqual(loaded.x, [0, 1, 2, 3, 4], name);
    const live: ChartData = { ...loaded, x: [], series: [] };
    for (const e of events) {
      for (const u of liveMessage(e).updates) if (u.chart === name) applyUpdate(live, u);
    }
    assert.deepEqual(live.x, loaded.x, name);
    assert.deepEqual(live.series.map((s) => s.label), [label], name);
    live.series[0].y.forEach((v, i) =>
      assert.ok(Math.abs(v! - loaded.series[0].y[i]!) < 1e-12, `${name} at ${i}`)
    );
  }
});
