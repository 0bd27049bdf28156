/**
 * One gradient-spike rule through the real store and DuckDB: the dashboard's spike markers, the
 * study's per-agent spike counts and the report's stability table judge the same run alike.
 */
import assert from "node:assert/strict";
import { buildReport, loadRunSummaries, openAnalysis, SPIKE_MULTIPLE } from "../../analysis/mod.ts";
import { openStore } from "../../events/mod.ts";
import { agentStability } from "../../study/agent-stability.ts";
import type { PlannedRun } from "../../study/plan-runs.ts";
import { loadStudyRuns } from "../../study/study-data.ts";
import type { ChartData } from "../../web/components/chart-data.ts";
import { runCharts } from "../../web/data/run-charts.ts";
import { writeFakeRun } from "../support/fake-run.ts";
import { dashboardRun, type DashboardRunSpec } from "../web/fixtures/dashboard-store.ts";

/** The steps a chart marks as spikes of `line`. */
function spikeSteps(chart: ChartData, line: string): number[] {
  const s = chart.series.find((c) => c.label === `${line} spike`);
  return s ? s.y.flatMap((y, i) => (y === null ? [] : [chart.x[i]])) : [];
}

Deno.test("spikes: dashboard, study and report agree on a run that starts without signal", async () => {
  // Steps 0-2 have an exactly zero gradient (no signal), wg-solver's step 6 is 60x the usual
  // (about 1) and wg-critic's step 7 is NaN. The old rules disagreed here: the dashboard's
  // spikeFlags and the report's gradNormStability took the zeros into the running median
  // (median 0: steps 3, 4 and 5 became spikes, 4 for the solver and 3 for the critic), the
  // study's agentStability left them out (1 and 0). The one rule leaves them out everywhere.
  const spec: DashboardRunSpec = {
    runId: "cold-start",
    seed: 4,
    estimator: "grpo",
    steps: 8,
    prompts: 2,
    groupSize: 4,
    evalEvery: 4,
    zeroGradientUntil: 3,
    spikeAt: 6,
    nonFiniteAt: 7,
  };
  const dir = await Deno.makeTempDir({ prefix: "polyrl-spikes-" });
  try {
    const path = `${dir}/events.sqlite`;
    {
      await using store = await openStore(path);
      await writeFakeRun(store, dashboardRun(spec));
    }
    await using a = await openAnalysis(path);
    const charts = await runCharts(a.conn, spec.runId);
    // loadStudyRuns reads a planned run's id, cell and seed only.
    const plan = [{
      runId: spec.runId,
      seed: spec.seed,
      cell: { id: "cell" },
    }] as unknown as PlannedRun[];
    const [run] = await loadStudyRuns(a.db, plan);
    const study = (agent: string) =>
      agentStability(agent, run.gradNorms.find((g) => g.agent === agent)!.values, SPIKE_MULTIPLE)
        .spikes;
    const report = buildReport(await loadRunSummaries(a.db, [spec.runId]), {
      groupBy: "estimator",
    });
    const reported = (wg: string) => report.stability.find((s) => s.wg === wg)!.spikes;

    assert.deepEqual(spikeSteps(charts["grad-agent"], "solver"), [6]);
    assert.deepEqual(spikeSteps(charts["grad-agent"], "critic"), []);
    assert.equal(study("solver"), 1);
    assert.equal(study("critic"), 0);
    assert.deepEqual(spikeSteps(charts["grad-wg"], "wg-solver"), [6]);
    assert.deepEqual(spikeSteps(charts["grad-wg"], "wg-critic"), []);
    assert.equal(reported("wg-solver"), 1);
    assert.equal(reported("wg-critic"), 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
