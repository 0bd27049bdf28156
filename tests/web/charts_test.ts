import assert from "node:assert/strict";
import { openStore } from "../../events/mod.ts";
import { applyUpdate, type ChartData } from "../../web/components/chart-data.ts";
import { fromWire, toWire } from "../../web/components/wire-json.ts";
import { liveMessage } from "../../web/data/live-updates.ts";
import { runCharts } from "../../web/data/run-charts.ts";
import { normMarkers } from "../../web/data/norm-markers.ts";
import { openDashboardSource } from "../../web/server/dashboard-source.ts";
import { writeFakeRun } from "../support/fake-run.ts";
import { dashboardRun } from "./fixtures/dashboard-store.ts";

Deno.test("norm markers: spikes by the analysis rule over the updates, non-finite at 0", () => {
  const points = [
    { x: 0, label: "wg0", norm: 0 }, // no signal: not in the median
    { x: 1, label: "wg0", norm: 1 },
    { x: 2, label: "wg0", norm: 1 },
    // two updates in step 3: both spikes, drawn at the larger
    { x: 3, label: "wg0", norm: 30 },
    { x: 3, label: "wg0", norm: 40 },
    { x: 4, label: "wg0", norm: NaN },
    { x: 4, label: "wg1", norm: 5 },
  ];
  assert.deepEqual(normMarkers("grad-wg", points), [
    { chart: "grad-wg", x: 3, label: "wg0 spike", value: 40, mode: "set", marker: "spike" },
    {
      chart: "grad-wg",
      x: 4,
      label: "wg0 non-finite",
      value: 0,
      mode: "set",
      marker: "non-finite",
    },
  ]);
});

Deno.test("Lemma 4.2 chart: the recorded multiplier, none for a MADA-RL run", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-web-lemma-" });
  try {
    const path = `${dir}/events.sqlite`;
    const spec = { seed: 2, steps: 3, prompts: 2, groupSize: 4, evalEvery: 3 };
    let spread = 0;
    {
      await using store = await openStore(path);
      await writeFakeRun(store, dashboardRun({ ...spec, runId: "grpo", estimator: "grpo" }));
      await writeFakeRun(store, dashboardRun({ ...spec, runId: "mada", estimator: "mada" }));
      for await (const e of store.readStream("mada")) {
        if (e.type !== "advantages.computed") continue;
        assert.equal(liveMessage(e).updates.filter((u) => u.chart === "lemma").length, 0);
        if (e.data.baseline.global.sigma > 0) spread++;
      }
    }
    // Groups with a global spread, where a recomputation would invent a multiplier.
    assert.ok(spread > 0);
    await using source = await openDashboardSource(path);
    const [grpo, mada] = await source.read(async (a) => [
      await runCharts(a.conn, "grpo"),
      await runCharts(a.conn, "mada"),
    ]);
    assert.deepEqual(grpo.lemma.series.map((s) => s.label).sort(), ["critic", "solver"]);
    assert.deepEqual(mada.lemma.series, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("non-finite numbers and bigints survive the wire", () => {
  assert.deepEqual(fromWire(toWire({ a: [NaN, Infinity, -Infinity, 1.5], n: 7n })), {
    a: [NaN, Infinity, -Infinity, 1.5],
    n: 7,
  });
  assert.equal(toWire({ big: 2n ** 60n }), `{"big":"${2n ** 60n}"}`);
});

Deno.test("a page followed live ends equal to the page loaded afresh", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-web-live-" });
  try {
    const path = `${dir}/events.sqlite`;
    const spec = {
      runId: "live",
      seed: 5,
      estimator: "dr-mas",
      steps: 3,
      prompts: 2,
      groupSize: 4,
      evalEvery: 2,
      complete: false,
    };
    {
      await using store = await openStore(path);
      await writeFakeRun(store, dashboardRun(spec));
    }
    await using source = await openDashboardSource(path);
    const { position, charts } = await source.read(async (a, position) => ({
      position,
      charts: await runCharts(a.conn, "live"),
    }));
    {
      await using store = await openStore(path);
      await writeFakeRun(
        store,
        dashboardRun({ ...spec, steps: 8, fromStep: 3, spikeAt: 6, nonFiniteAt: 7 }),
      );
      for await (const e of store.readAll({ from: position + 1 })) {
        for (const u of liveMessage(e).updates) applyUpdate(charts[u.chart], u);
      }
    }
    const fresh = await source.read((a) => runCharts(a.conn, "live"));
    const close = (a: ChartData, b: ChartData, name: string) => {
      assert.deepEqual(a.x, b.x, name);
      // Spike markers are judged by the page in the browser, not by the feed.
      const lines = (c: ChartData) =>
        c.series.filter((s) => s.marker !== "spike").sort((p, q) => p.label.localeCompare(q.label));
      const [la, lb] = [lines(a), lines(b)];
      assert.deepEqual(la.map((s) => s.label), lb.map((s) => s.label), name);
      la.forEach((s, i) =>
        s.y.forEach((y, j) => {
          const z = lb[i].y[j];
          assert.ok(
            y === z || (y !== null && z !== null && Math.abs(y - z) < 1e-9),
            `${name} ${s.label} x=${a.x[j]}: live ${y} vs fresh ${z}`,
          );
        })
      );
    };
    for (const name of Object.keys(fresh)) close(charts[name], fresh[name], name);
    assert.ok(fresh["grad-wg"].series.some((s) => s.label === "wg-critic non-finite"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("every Run page chart names its axes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-web-axes-" });
  try {
    const path = `${dir}/events.sqlite`;
    {
      await using store = await openStore(path);
      await writeFakeRun(
        store,
        dashboardRun({
          runId: "axes",
          seed: 4,
          estimator: "grpo",
          steps: 2,
          prompts: 2,
          groupSize: 4,
          evalEvery: 1,
        }),
      );
    }
    await using source = await openDashboardSource(path);
    const charts = await source.read((a) => runCharts(a.conn, "axes"));
    assert.ok(Object.keys(charts).length >= 6);
    for (const [name, chart] of Object.entries(charts)) {
      assert.equal(chart.xLabel, "step", name);
      assert.ok(chart.yLabel && chart.yLabel.trim() !== "", `${name} has no y-axis label`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
