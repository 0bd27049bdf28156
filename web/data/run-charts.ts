import { type Kysely, sql } from "kysely";
import type { AnalysisDb } from "../../analysis/mod.ts";
import { applyUpdate, type ChartData, chartFromRows } from "../components/chart-data.ts";
import { CHARTS, GLOBAL, markerLabel, SPIKE_MULTIPLE } from "./chart-names.ts";
import { spikeFlags } from "./spike-flags.ts";

/** The Run page's time series, keyed by chart name (see CHARTS). */
export type RunCharts = Record<string, ChartData>;

interface Row {
  x: number;
  label: string;
  value: number | null;
  n: number;
}

/**
 * Per-step series of one run: rollout reward and accuracy; gradient norms per worker group and
 * per agent (mean over a step's updates of the finite norms) with spikes and non-finite steps
 * as markers; per-agent baseline mean and spread; the mean Lemma 4.2 multiplier per agent.
 *
 * @example
 * ```ts
 * const charts = await runCharts(analysis.db, "run-1");
 * charts["grad-wg"].series.map((s) => s.label); // ["wg-critic", "wg-solver", "wg-critic non-finite", ...]
 * ```
 */
export async function runCharts(db: Kysely<AnalysisDb>, runId: string): Promise<RunCharts> {
  const q = async <R>(query: ReturnType<typeof sql<R>>) => (await query.execute(db)).rows;
  const reward = await q(sql<Row>`
    SELECT step AS x, 'reward' AS label, avg(total) AS value, count(*) AS n FROM rewards
    WHERE run_id = ${runId} AND phase = 'rollout' AND agent IS NULL GROUP BY step
    UNION ALL
    SELECT step, 'accuracy', avg(correct::INT), count(correct) FROM trajectories
    WHERE run_id = ${runId} AND phase = 'rollout' GROUP BY step
    ORDER BY x, label`);
  const wg = await q(sql<Row>`
    SELECT step AS x, wg AS label, avg(grad_norm) FILTER (isfinite(grad_norm)) AS value,
      count(*) FILTER (isfinite(grad_norm)) AS n
    FROM grad_steps WHERE run_id = ${runId} GROUP BY step, wg ORDER BY x, label`);
  const wgNonFinite = await q(sql<Row>`
    SELECT DISTINCT step AS x, wg AS label, 0 AS value, 1 AS n FROM grad_steps
    WHERE run_id = ${runId} AND NOT isfinite(grad_norm) ORDER BY x`);
  const agent = await q(sql<Row>`
    SELECT g.step AS x, e.key AS label,
      avg(CAST(e.value AS DOUBLE)) FILTER (isfinite(CAST(e.value AS DOUBLE))) AS value,
      count(*) FILTER (isfinite(CAST(e.value AS DOUBLE))) AS n
    FROM grad_steps g, json_each(g.agent_grad_norms_json) e
    WHERE g.run_id = ${runId} GROUP BY g.step, e.key ORDER BY x, label`);
  const agentNonFinite = await q(sql<Row>`
    SELECT DISTINCT g.step AS x, e.key AS label, 0 AS value, 1 AS n
    FROM grad_steps g, json_each(g.agent_grad_norms_json) e
    WHERE g.run_id = ${runId} AND NOT isfinite(CAST(e.value AS DOUBLE)) ORDER BY x`);
  const baselines = await q(sql<Row & { sigma: number | null }>`
    SELECT step AS x, coalesce(agent, ${GLOBAL}) AS label, avg(mu) AS value, avg(sigma) AS sigma,
      count(*) AS n
    FROM baselines WHERE run_id = ${runId} GROUP BY step, agent ORDER BY x, label`);
  const lemma = await q(sql<Row>`
    SELECT step AS x, agent AS label, avg(multiplier) AS value, count(multiplier) AS n
    FROM lemma_multipliers WHERE run_id = ${runId} GROUP BY step, agent ORDER BY x, label`);
  return {
    [CHARTS.reward]: chartFromRows("Rollout reward and accuracy", "step", reward),
    [CHARTS.gradWg]: withMarkers(
      chartFromRows("Gradient norm per worker group (before clipping)", "step", wg),
      wgNonFinite,
    ),
    [CHARTS.gradAgent]: withMarkers(
      chartFromRows("Gradient norm per agent", "step", agent),
      agentNonFinite,
    ),
    [CHARTS.baselineMu]: chartFromRows("Advantage baseline mean μ per agent", "step", baselines),
    [CHARTS.baselineSigma]: chartFromRows(
      "Advantage baseline spread σ per agent",
      "step",
      baselines.map((b) => ({ ...b, value: b.sigma })),
    ),
    [CHARTS.lemma]: chartFromRows(
      "Lemma 4.2 multiplier per agent (1 = no mismatch)",
      "step",
      lemma,
    ),
  };
}

/** Adds spike markers (from the series) and non-finite markers (from `nonFinite` rows). */
function withMarkers(chart: ChartData, nonFinite: readonly Row[]): ChartData {
  for (const s of [...chart.series]) {
    const flags = spikeFlags(s.y.map((v) => v ?? NaN), SPIKE_MULTIPLE);
    flags.forEach((spike, i) => {
      if (!spike) return;
      const label = markerLabel(s.label, "spike");
      applyUpdate(chart, {
        chart: chart.title,
        x: chart.x[i],
        label,
        value: s.y[i]!,
        mode: "set",
        marker: "spike",
      });
    });
  }
  for (const r of nonFinite) {
    const label = markerLabel(r.label, "non-finite");
    applyUpdate(chart, {
      chart: chart.title,
      x: r.x,
      label,
      value: 0,
      mode: "set",
      marker: "non-finite",
    });
  }
  return chart;
}
