import { sql } from "kysely";
import {
  type Analysis,
  buildReport,
  describeSelection,
  heldRuns,
  loadRunSummaries,
  NoRunsSelectedError,
  parseSelection,
  type QueryTable,
  QueryTimeoutError,
  type Report,
  ReportError,
  resolveRuns,
  type RunSelection,
  RunSelectionError,
  selectedRunIds,
  selectionFailure,
  type SelectionFilters,
  selectionStatement,
  UnknownRunError,
} from "../../analysis/mod.ts";
import { type ChartData, chartFromRows } from "../components/chart-data.ts";
import type { AnalysisReader } from "./analysis-reader.ts";
import { CHARTS } from "./chart-names.ts";
import { type RunCharts, runCharts } from "./run-charts.ts";

/** The Compare page's form values, as typed in its URL. */
export interface CompareQuery extends SelectionFilters {
  readonly runs: readonly string[];
  readonly groupBy: string;
  readonly baseline?: string;
}

/** What the Compare page shows. */
export interface CompareData {
  readonly kind: "compare-data";
  readonly runs: readonly string[];
  /** the selection in words: "status completed, kind training, not hidden" */
  readonly selection: string;
  readonly report: Report;
  /**
   * The curves overlaid, each a line per group (the mean over its runs) with a thin line per run
   * (its seed) in the group's colour: rollout reward; eval avg@k (a run's mean over its
   * benchmarks of one k); gradient norm per worker group and per agent; Lemma 4.2 multiplier
   * per agent. A run's line is the one its Run page draws.
   */
  readonly curves: readonly ChartData[];
}

/** One run's value of one line (a worker group, an agent; "" for the run's only line) at x. */
interface RunPoint {
  readonly run: string;
  readonly x: number;
  readonly line: string;
  readonly value: number;
}

/**
 * The report of the given runs grouped by a config key, plus curves per group and run to overlay.
 * Throws the analysis errors (UnknownRunError, ReportError) for the page to show.
 *
 * @example
 * ```ts
 * import type { Analysis } from "../../analysis/mod.ts";
 * declare const analysis: Analysis; // the dashboard source's open analysis
 * const c = await compareRuns(analysis, ["r1", "r2"], { groupBy: "estimator", baseline: "grpo" });
 * c.report.vsBaseline[0].welch?.p;
 * ```
 */
export async function compareRuns(
  { db, conn }: Pick<Analysis, "db" | "conn">,
  runArgs: readonly string[],
  options: {
    readonly groupBy: string;
    readonly baseline?: string;
    readonly selection?: RunSelection;
  },
): Promise<CompareData> {
  const runs = await resolveRuns(db, runArgs);
  const report = buildReport(await loadRunSummaries(db, runs), options);
  const groupOf = new Map(report.groups.flatMap((g) => g.runs.map((r) => [r, g.value])));
  const charts = new Map<string, RunCharts>();
  for (const run of runs) charts.set(run, await runCharts(conn, run));
  // Each run's lines of one of its Run page's charts (markers left out), named by `line`.
  const pointsOf = (chart: string, line: (label: string) => string): RunPoint[] =>
    runs.flatMap((run) => {
      const c = charts.get(run)![chart];
      return c.series.flatMap((s) =>
        s.marker
          ? []
          : s.y.flatMap((value, i) =>
            value === null ? [] : [{ run, x: c.x[i], line: line(s.label), value }]
          )
      );
    });
  const { rows: evals } = await sql<{ run_id: string; step: number; k: number; value: number }>`
    SELECT run_id, step, k, avg(avg_at_k) AS value FROM eval_summary
    WHERE run_id IN (SELECT unnest(${runs}::VARCHAR[])) GROUP BY run_id, step, k ORDER BY step`
    .execute(db);
  // avg@2 and avg@16 are different measurements: one line per group and k when the runs differ.
  const ks = new Set(evals.map((e) => e.k));
  const by = options.groupBy;
  const overlay = (title: string, yLabel: string, points: readonly RunPoint[]) =>
    groupCurves(`${title} by ${by}`, yLabel, points, groupOf);
  return Object.freeze({
    kind: "compare-data",
    runs,
    selection: describeSelection(options.selection ?? { runs }),
    report,
    curves: [
      overlay("Rollout reward", "reward", pointsOf(CHARTS.reward, () => "")),
      overlay(
        `Eval avg@${ks.size === 1 ? [...ks][0] : "k"}`,
        "avg@k",
        evals.map((e) => ({
          run: e.run_id,
          x: e.step,
          line: ks.size > 1 ? `avg@${e.k}` : "",
          value: e.value,
        })),
      ),
      overlay("Gradient norm per worker group", "gradient norm", pointsOf(CHARTS.gradWg, String)),
      overlay("Gradient norm per agent", "gradient norm", pointsOf(CHARTS.gradAgent, String)),
      overlay("Lemma 4.2 multiplier per agent", "multiplier", pointsOf(CHARTS.lemma, String)),
    ],
  });
}

/**
 * A chart of run points: per group and line the mean over the group's runs with a value at x,
 * and each run's own line, labelled "GROUP LINE · RUN" and drawn thin in its group line's colour.
 */
function groupCurves(
  title: string,
  yLabel: string,
  points: readonly RunPoint[],
  groupOf: ReadonlyMap<string, string>,
): ChartData {
  const lineOf = (p: RunPoint) => [groupOf.get(p.run)!, p.line].filter(Boolean).join(" ");
  const memberOf = (p: RunPoint) => `${lineOf(p)} · ${p.run}`;
  const cells = Map.groupBy(points, (p) => `${p.x}\u0000${lineOf(p)}`);
  const chart = chartFromRows(
    `${title}: mean over each group's runs, and each run (thin)`,
    "step",
    [
      ...[...cells.values()].map((c) => ({
        x: c[0].x,
        label: lineOf(c[0]),
        value: c.reduce((s, p) => s + p.value, 0) / c.length,
        n: c.length,
      })),
      ...points.map((p) => ({ x: p.x, label: memberOf(p), value: p.value, n: 1 })),
    ],
    yLabel,
  );
  const members = new Map(points.map((p) => [memberOf(p), lineOf(p)]));
  return {
    ...chart,
    series: chart.series.map((s) => members.has(s.label) ? { ...s, of: members.get(s.label) } : s),
  };
}

/** What the Compare page renders: the comparison, or the error that stopped it. */
export type CompareResult =
  | { readonly data: CompareData; readonly error: null }
  | { readonly data: null; readonly error: string };

/**
 * The Compare page's data for a query: runs named in it (or, with none, the completed training
 * runs) narrowed by its filters. The filter predicate is user SQL: checked here, then run by
 * `runSql`, the dashboard's sealed read-only SQL runner with its time limit, as the SQL console's
 * queries are. A bad filter, an unknown run, an empty selection or a report that cannot be made
 * is the page's error, never a 500.
 *
 * @example
 * ```ts
 * import type { DashboardSource } from "../server/dashboard-source.ts";
 * import type { UserSql } from "../server/user-sql.ts";
 * declare const source: DashboardSource;
 * declare const sql: UserSql; // the dashboard's read-only SQL runner
 * const r = await compareSelection(source, (q) => sql.query(q), { runs: [], groupBy: "estimator" });
 * r.error ?? r.data.report.groups.length;
 * ```
 */
export async function compareSelection(
  source: AnalysisReader,
  runSql: (sql: string) => Promise<QueryTable>,
  query: CompareQuery,
): Promise<CompareResult> {
  try {
    const { selection, statement } = await source.read(async (a) => {
      const named = query.runs.length ? await resolveRuns(a.db, query.runs) : [];
      const selection = parseSelection(query, named, "");
      return { selection, statement: await selectionStatement(a.conn, selection) };
    });
    // Outside source.read: the SQL runner takes its own turn at the projections.
    const table = await runSql(statement).catch((err) => {
      throw selectionFailure(selection, err);
    });
    if (table.truncated) {
      throw new RunSelectionError("where", `more than ${table.rows.length} runs match; narrow it`);
    }
    const ids = selectedRunIds(table, selection);
    const data = await source.read(async (a) => {
      if (ids.length === 0) {
        throw new NoRunsSelectedError(describeSelection(selection), await heldRuns(a.conn));
      }
      return await compareRuns(a, ids, { ...query, selection });
    });
    return { data, error: null };
  } catch (err) {
    if (
      err instanceof UnknownRunError || err instanceof ReportError ||
      err instanceof RunSelectionError || err instanceof NoRunsSelectedError ||
      err instanceof QueryTimeoutError
    ) {
      return { data: null, error: err.message };
    }
    throw err;
  }
}
