/**
 * The Run page's off-policy chart: per worker group the largest ratio and the dual-clipped and
 * KL-clamped token shares, mean over a step's updates, from the projection and from the live feed
 * alike; empty for a run that recorded none.
 */
import assert from "node:assert/strict";
import { type NewEvent, openStore } from "../../events/mod.ts";
import { liveMessage } from "../../web/data/live-updates.ts";
import { runCharts } from "../../web/data/run-charts.ts";
import { openDashboardSource } from "../../web/server/dashboard-source.ts";
import { fakeRunEvents } from "../support/fake-run.ts";
import { runSpec } from "../analysis/fixtures/fill-store.ts";

Deno.test("off-policy chart: recorded diagnostics per worker group, none for a run without them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-web-off-policy-" });
  try {
    const path = `${dir}/events.sqlite`;
    // Step 1 of run "dual" recorded them (a dual clip and KL clamp); run "plain" none.
    const withDiagnostics = (e: NewEvent): NewEvent =>
      e.type === "gradient_step.applied" && e.data.step === 1
        ? { ...e, data: { ...e.data, maxRatio: 3.5, dualClipFraction: 0.25, klClampFraction: 0 } }
        : e;
    const live: string[] = [];
    {
      await using store = await openStore(path);
      for (const runId of ["dual", "plain"]) {
        for (const events of fakeRunEvents(runSpec({ runId, steps: 2 }))) {
          await store.append(runId, runId === "dual" ? events.map(withDiagnostics) : events);
        }
      }
      for await (const e of store.readStream("dual")) {
        for (const u of liveMessage(e).updates) {
          if (u.chart === "off-policy") live.push(`${u.x} ${u.label} ${u.value}`);
        }
      }
    }
    await using source = await openDashboardSource(path);
    const [dual, plain] = await source.read(async (a) => [
      await runCharts(a.conn, "dual"),
      await runCharts(a.conn, "plain"),
    ]);
    const chart = dual["off-policy"];
    assert.deepEqual(chart.x, [1]);
    const wgs = [...new Set(chart.series.map((s) => s.label.split(" ")[0]))].sort();
    assert.ok(wgs.length > 0);
    const byLabel = (p: readonly unknown[], q: readonly unknown[]) =>
      String(p[0]).localeCompare(String(q[0]));
    const expected = wgs.flatMap((wg) => [
      [`${wg} max ratio`, 3.5],
      [`${wg} dual-clipped`, 0.25],
      [`${wg} KL-clamped`, 0],
    ]).sort(byLabel);
    assert.deepEqual(chart.series.map((s) => [s.label, s.y[0]]).sort(byLabel), expected);
    // The live feed sends the same points (one per update).
    assert.deepEqual(
      [...new Set(live)].sort(),
      expected.map(([label, v]) => `1 ${label} ${v}`).sort(),
    );
    assert.deepEqual(plain["off-policy"].series, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
