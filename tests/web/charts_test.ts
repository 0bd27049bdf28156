import assert from "node:assert/strict";
import { gradNormStability } from "../../analysis/mod.ts";
import { openStore } from "../../events/mod.ts";
import { applyUpdate, type ChartData } from "../../web/components/chart-data.ts";
import { fromWire, toWire } from "../../web/components/wire-json.ts";
import { liveMessage } from "../../web/data/live-updates.ts";
import { runCharts } from "../../web/data/run-charts.ts";
import { spikeFlags } from "../../web/data/spike-flags.ts";
import { openDashboardSource } from "../../web/server/dashboard-source.ts";
import { seeded, writeWebRun } from "./fixtures/web-run.ts";

Deno.test("spike flags follow the analysis rule: running median of earlier finite norms", () => {
  assert.deepEqual(spikeFlags([1, 1, 1, 50, NaN], 10), [false, false, false, true, false]);
  assert.deepEqual(spikeFlags([2, 1, 25, 30, 9], 10), [false, false, true, true, false]);
  const rand = seeded(3);
  for (let trial = 0; trial < 20; trial++) {
    const norms = Array.from({ length: 200 }, () => {
      const r = rand();
      return r < 0.03 ? NaN : r < 0.08 ? 20 + 100 * rand() : 0.5 + rand();
    });
    const flags = spikeFlags(norms, 10);
    assert.equal(flags.filter(Boolean).length, gradNormStability(norms, 10).spikes);
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
      estimator: "dr_mas",
      steps: 3,
      prompts: 2,
      samples: 4,
      evalEvery: 2,
      complete: false,
    };
    {
      await using store = await openStore(path);
      await writeWebRun(store, spec);
    }
    await using source = await openDashboardSource(path);
    const { position, charts } = await source.read(async (a, position) => ({
      position,
      charts: await runCharts(a.conn, "live"),
    }));
    {
      await using store = await openStore(path);
      await writeWebRun(store, { ...spec, steps: 8, fromStep: 3, spikeAt: 6, nonFiniteAt: 7 });
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
