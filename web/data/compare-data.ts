import { type Kysely, sql } from "kysely";
import {
  type AnalysisDb,
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
import type { DashboardSource } from "../server/dashboard-source.ts";

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
  /** rollout reward per step, mean over each group's runs */
  readonly rewardCurves: ChartData;
  /** eval avg@k per evaluated step, mean over each group's runs and benchmarks of one k */
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
  options: {
    readonly groupBy: string;
    readonly baseline?: string;
    readonly selection?: RunSelection;
  },
): Promise<CompareData> {
  const runs = await resolveRuns(db, runArgs);
  const report = buildReport(await loadRunSummaries(db, runs), options);
  const groupOf = new Map(report.groups.flatMap((g) => g.runs.map((r) => [r, g.value])));
  const { rows: rewards } = await sql<{ run_id: string; step: number; value: number }>`
    SELECT run_id, step, avg(total) AS value FROM rewards
    WHERE run_id IN (SELECT unnest(${runs}::VARCHAR[])) AND phase = 'rollout' AND agent IS NULL
    GROUP BY run_id, step ORDER BY step`.execute(db);
  const { rows: evals } = await sql<{ run_id: string; step: number; k: number; value: number }>`
    SELECT run_id, step, k, avg(avg_at_k) AS value FROM eval_summary
    WHERE run_id IN (SELECT unnest(${runs}::VARCHAR[])) GROUP BY run_id, step, k ORDER BY step`
    .execute(db);
  // avg@2 and avg@16 are different measurements: one line per group and k when the runs differ.
  const ks = new Set(evals.map((e) => e.k));
  const groupOfRow = (r: { run_id: string }) => groupOf.get(r.run_id)!;
  const evalLine = ks.size > 1
    ? (r: { run_id: string; k: number }) => `${groupOf.get(r.run_id)} avg@${r.k}`
    : groupOfRow;
  return Object.freeze({
    kind: "compare-data",
    runs,
    selection: describeSelection(options.selection ?? { runs }),
    report,
    rewardCurves: groupCurves(
      `Rollout reward by ${options.groupBy}`,
      "reward",
      rewards,
      groupOfRow,
    ),
    evalCurves: groupCurves(
      `Eval avg@${ks.size === 1 ? [...ks][0] : "k"} by ${options.groupBy}`,
      "avg@k",
      evals,
      evalLine,
    ),
  });
}

function groupCurves<R extends { run_id: string; step: number; value: number }>(
  title: string,
  yLabel: string,
  rows: readonly R[],
  lineOf: (row: R) => string,
): ChartData {
  const cells = Map.groupBy(rows, (r) => `${r.step}\u0000${lineOf(r)}`);
  return chartFromRows(
    title,
    "step",
    [...cells.values()].map((c) => ({
      x: c[0].step,
      label: lineOf(c[0]),
      value: c.reduce((s, r) => s + r.value, 0) / c.length,
      n: c.length,
    })),
    yLabel,
  );
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
 * const r = await compareSelection(source, (q) => sql.query(q), { runs: [], groupBy: "estimator" });
 * r.error ?? r.data.report.groups.length;
 * ```
 */
export async function compareSelection(
  source: Pick<DashboardSource, "read">,
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
      return await compareRuns(a.db, ids, { ...query, selection });
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
