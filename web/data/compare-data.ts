import { type Kysely, sql } from "kysely";
import {
  type AnalysisDb,
  buildReport,
  loadRunSummaries,
  type Report,
  resolveRuns,
} from "../../analysis/mod.ts";
import { type ChartData, chartFromRows } from "../components/chart-data.ts";

/** What the Compare page shows. */
export interface CompareData {
  readonly kind: "compare-data";
  readonly runs: readonly string[];
  readonly report: Report;
  /** rollout reward per step, mean over each group's runs */
  readonly rewardCurves: ChartData;
  /** eval avg@k per evaluated step, mean over each group's runs and benchmarks */
  readonly evalCurves: ChartData;
}

/**
 * The report of the given runs grouped by a config key, plus curves per group to overlay.
 * Throws the analysis errors (UnknownRunError, ReportError) for the page to show.
 *
 * @example
 * ```ts
 * const c = await compareRuns(db, ["r1", "r2"], { groupBy: "estimator", baseline: "grpo" });
 * c.report.vsBaseline[0].welch?.p;
 * ```
 */
export async function compareRuns(
  db: Kysely<AnalysisDb>,
  runArgs: readonly string[],
  options: { readonly groupBy: string; readonly baseline?: string },
): Promise<CompareData> {
  const runs = await resolveRuns(db, runArgs);
  const report = buildReport(await loadRunSummaries(db, runs), options);
  const groupOf = new Map(report.groups.flatMap((g) => g.runs.map((r) => [r, g.value])));
  const { rows: rewards } = await sql<{ run_id: string; step: number; value: number }>`
    SELECT run_id, step, avg(total) AS value FROM rewards
    WHERE run_id IN (SELECT unnest(${runs}::VARCHAR[])) AND phase = 'rollout' AND agent IS NULL
    GROUP BY run_id, step ORDER BY step`.execute(db);
  const { rows: evals } = await sql<{ run_id: string; step: number; value: number }>`
    SELECT run_id, step, avg(avg_at_k) AS value FROM eval_summary
    WHERE run_id IN (SELECT unnest(${runs}::VARCHAR[])) GROUP BY run_id, step ORDER BY step`
    .execute(db);
  return Object.freeze({
    kind: "compare-data",
    runs,
    report,
    rewardCurves: groupCurves(`Rollout reward by ${options.groupBy}`, rewards, groupOf),
    evalCurves: groupCurves(`Eval avg@k by ${options.groupBy}`, evals, groupOf),
  });
}

function groupCurves(
  title: string,
  rows: readonly { run_id: string; step: number; value: number }[],
  groupOf: ReadonlyMap<string, string>,
): ChartData {
  const cells = Map.groupBy(rows, (r) => `${r.step}\u0000${groupOf.get(r.run_id)}`);
  return chartFromRows(
    title,
    "step",
    [...cells.values()].map((c) => ({
      x: c[0].step,
      label: groupOf.get(c[0].run_id)!,
      value: c.reduce((s, r) => s + r.value, 0) / c.length,
      n: c.length,
    })),
  );
}
