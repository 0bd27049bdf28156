import type { DuckDBConnection, DuckDBValue } from "@duckdb/node-api";
import {
  applyUpdate,
  type ChartData,
  chartFromRows,
  type ChartUpdate,
} from "../components/chart-data.ts";
import { CHARTS, GLOBAL, offPolicyLabel } from "./chart-names.ts";
import { MeanCells } from "./mean-cells.ts";
import { normMarkers, type NormPoint } from "./norm-markers.ts";

/** The Run page's time series, keyed by chart name (see CHARTS). */
export type RunCharts = Record<string, ChartData>;

type Row = { x: number; label: string; value: number | null; n: number };

/** A query's result column by column: far cheaper than row objects for 10k-step series. */
async function columns(
  conn: DuckDBConnection,
  query: string,
  params: DuckDBValue[],
): Promise<Record<string, unknown[]>> {
  const reader = await conn.runAndReadAll(query, params);
  const data = reader.getColumnsJS();
  // No rows gives no column arrays at all (a run with no steps yet): every column is then empty.
  return Object.fromEntries(reader.columnNames().map((name, i) => [name, data[i] ?? []]));
}

/** A JSON number as analysis stores it: non-finite values as the strings "NaN", "Infinity". */
const jsonNumber = (v: unknown) => (typeof v === "number" ? v : Number(v));

/**
 * Per-step series of one run: rollout reward and, on a chart of its own, accuracy; evaluation avg@k and pass@k per
 * benchmark at each evaluated step; gradient norms per worker group and
 * per agent (mean over a step's updates of the finite norms) with spikes (the analysis rule over
 * the updates) and non-finite steps as markers; per-agent baseline mean and spread; the mean
 * Lemma 4.2 multiplier per agent as the engine recorded it; per worker group the largest ratio and
 * the dual-clipped and KL-clamped token shares, where the updates recorded them. Four scans of the
 * projections, read column by column, keep a 10k-step run's page fast.
 *
 * @example
 * ```ts
 * import type { Analysis } from "../../analysis/mod.ts";
 * declare const analysis: Analysis;
 * const charts = await runCharts(analysis.conn, "run-1");
 * charts["grad-wg"].series.map((s) => s.label); // ["wg-critic", "wg-critic non-finite", ...]
 * ```
 */
export async function runCharts(conn: DuckDBConnection, runId: string): Promise<RunCharts> {
  const reward = await columns(
    conn,
    `SELECT 'reward' AS chart, step::INTEGER AS x, 'reward' AS label, avg(total) AS value,
       count(*)::INTEGER AS n
     FROM rewards WHERE run_id = $1 AND phase = 'rollout' AND agent IS NULL GROUP BY step
     UNION ALL
     SELECT 'accuracy', step::INTEGER, 'accuracy', avg(correct::INT), count(correct)::INTEGER
     FROM trajectories WHERE run_id = $1 AND phase = 'rollout' GROUP BY step
     ORDER BY x, label`,
    [runId],
  );
  const grads = await columns(
    conn,
    `SELECT step::INTEGER AS step, wg, grad_norm, agent_grad_norms_json, max_ratio,
       dual_clip_fraction, kl_clamp_fraction FROM grad_steps
     WHERE run_id = $1 ORDER BY step, wg, "update"`,
    [runId],
  );
  // Baseline mean and spread per step and agent, and the recorded Lemma 4.2 multiplier of every
  // prompt group averaged per step: aggregated by DuckDB, since a long run holds millions of
  // baseline rows.
  const stats = await columns(
    conn,
    `WITH b AS (SELECT * FROM baselines WHERE run_id = $1)
     SELECT 'mu' AS chart, step::INTEGER AS x, coalesce(agent, '${GLOBAL}') AS label,
       avg(mu) FILTER (isfinite(mu)) AS value, count(*) FILTER (isfinite(mu))::INTEGER AS n
     FROM b GROUP BY step, agent
     UNION ALL
     SELECT 'sigma', step::INTEGER, coalesce(agent, '${GLOBAL}'),
       avg(sigma) FILTER (isfinite(sigma)), count(*) FILTER (isfinite(sigma))::INTEGER
     FROM b GROUP BY step, agent
     UNION ALL
     SELECT 'lemma', step::INTEGER, agent, avg(multiplier) FILTER (isfinite(multiplier)),
       count(multiplier) FILTER (isfinite(multiplier))::INTEGER
     FROM b WHERE agent IS NOT NULL GROUP BY step, agent
     ORDER BY x, label`,
    [runId],
  );
  // Validation accuracy of every evaluated step, one line per benchmark and metric.
  const evals = await columns(
    conn,
    `SELECT step::INTEGER AS x, benchmark || ' avg@' || k AS label, avg_at_k AS value,
       problems::INTEGER AS n FROM eval_summary WHERE run_id = $1
     UNION ALL
     SELECT step::INTEGER, benchmark || ' pass@' || k, pass_at_k, problems::INTEGER
     FROM eval_summary WHERE run_id = $1
     ORDER BY x, label`,
    [runId],
  );
  const rows = (c: Record<string, unknown[]>): Row[] =>
    c.x.map((x, i) => ({
      x: x as number,
      label: c.label[i] as string,
      value: c.value[i] as number | null,
      n: c.n[i] as number,
    }));
  const [wg, agent, offPolicy] = [new MeanCells(), new MeanCells(), new MeanCells()];
  const [wgNorms, agentNorms]: NormPoint[][] = [[], []];
  grads.step.forEach((s, i) => {
    const x = s as number;
    const norm = grads.grad_norm[i] as number;
    wg.add(x, grads.wg[i] as string, norm);
    wgNorms.push({ x, label: grads.wg[i] as string, norm });
    const perAgent = JSON.parse(grads.agent_grad_norms_json[i] as string) as Record<
      string,
      unknown
    >;
    for (const [label, v] of Object.entries(perAgent)) {
      agent.add(x, label, jsonNumber(v));
      agentNorms.push({ x, label, norm: jsonNumber(v) });
    }
    const diagnostics = [
      ["max ratio", grads.max_ratio[i]],
      ["dual-clipped", grads.dual_clip_fraction[i]],
      ["KL-clamped", grads.kl_clamp_fraction[i]],
    ] as const;
    for (const [what, v] of diagnostics) {
      if (v !== null) offPolicy.add(x, offPolicyLabel(grads.wg[i] as string, what), v as number);
    }
  });
  // The rows of one chart of a query that serves several (its `chart` column).
  const chartRows = (c: Record<string, unknown[]>, chart: string): Row[] =>
    c.chart.flatMap((name, i) =>
      name === chart && c.value[i] !== null
        ? [{
          x: c.x[i] as number,
          label: c.label[i] as string,
          value: c.value[i] as number,
          n: c.n[i] as number,
        }]
        : []
    );
  const statRows = (chart: string) => chartRows(stats, chart);
  return {
    // Apart, not on one axis: with rewards.weights {accuracy: 1} the trajectory reward is the
    // accuracy itself, and one line would hide the other.
    [CHARTS.reward]: chartFromRows(
      "Rollout reward (mean trajectory reward; invalid-action penalties are per turn)",
      "step",
      chartRows(reward, "reward"),
      "reward",
    ),
    [CHARTS.accuracy]: chartFromRows(
      "Rollout accuracy (share of trajectories with a correct final answer)",
      "step",
      chartRows(reward, "accuracy"),
      "accuracy",
    ),
    [CHARTS.evalAccuracy]: chartFromRows(
      "Evaluation accuracy per benchmark (avg@k, pass@k)",
      "step",
      rows(evals),
      "accuracy",
    ),
    [CHARTS.gradWg]: withMarkers(
      chartFromRows(
        "Gradient norm per worker group (before clipping, mean over the step's updates)",
        "step",
        wg.rows(),
        "gradient norm",
      ),
      normMarkers(CHARTS.gradWg, wgNorms),
    ),
    [CHARTS.gradAgent]: withMarkers(
      chartFromRows(
        "Gradient norm per agent (mean over the step's updates)",
        "step",
        agent.rows(),
        "gradient norm",
      ),
      normMarkers(CHARTS.gradAgent, agentNorms),
    ),
    [CHARTS.offPolicy]: chartFromRows(
      "Off-policy: largest ratio new / old, shares of tokens dual-clipped and KL-clamped " +
        "(mean over the step's updates)",
      "step",
      offPolicy.rows(),
      "ratio, share of tokens",
    ),
    [CHARTS.baselineMu]: chartFromRows(
      "Advantage baseline mean μ per agent",
      "step",
      statRows("mu"),
      "μ",
    ),
    [CHARTS.baselineSigma]: chartFromRows(
      "Advantage baseline spread σ per agent",
      "step",
      statRows("sigma"),
      "σ",
    ),
    [CHARTS.lemma]: chartFromRows(
      "Lemma 4.2 multiplier per agent (1 = no mismatch)",
      "step",
      statRows("lemma"),
      "multiplier",
    ),
  };
}

function withMarkers(chart: ChartData, markers: readonly ChartUpdate[]): ChartData {
  for (const m of markers) applyUpdate(chart, m);
  return chart;
}
