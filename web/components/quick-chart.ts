/**
 * The SQL console's chart of a query result: a numeric first column is the x axis, every other
 * numeric column is a y, and the text columns name the groups, one line per group (as in
 * `SELECT step, agent, avg(grad_norm) ... GROUP BY step, agent`). Without a numeric first
 * column each row is a bar, named by its first text column.
 */
import { type ChartData, chartFromRows } from "./chart-data.ts";
import { formatCell } from "./format.ts";

/** More lines than this are no quick chart (a group per row): the console says so instead. */
export const MAX_QUICK_SERIES = 20;

/** A query result as the console holds it. */
export interface ResultTable {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
}

/** The chart of a result, or why there is none. */
export type QuickChart =
  | { readonly chart: ChartData; readonly note?: undefined }
  | { readonly chart: null; readonly note: string };

/** Whether every non-null cell of column `i` passes `is`, and one at least is there. */
function columnOf(r: ResultTable, i: number, is: (v: unknown) => boolean): boolean {
  let seen = false;
  for (const row of r.rows) {
    if (row[i] === null || row[i] === undefined) continue;
    if (!is(row[i])) return false;
    seen = true;
  }
  return seen;
}

const isNumber = (v: unknown) => typeof v === "number";
const isText = (v: unknown) => typeof v === "string";
/** A cell as a point's value: NaN and the infinities (DuckDB can return them) are not drawn. */
const finite = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);

/**
 * @example
 * ```ts
 * quickChart({ columns: ["step", "agent", "norm"], rows: [[0, "critic", 1], [0, "solver", 2]] })
 *   .chart?.series.map((s) => s.label); // ["critic", "solver"]
 * ```
 */
export function quickChart(r: ResultTable): QuickChart {
  const numeric = r.columns.map((_, i) => columnOf(r, i, isNumber));
  const groups = r.columns.flatMap((_, i) => (columnOf(r, i, isText) ? [i] : []));
  if (!numeric.includes(true)) return { chart: null, note: "no numeric column to draw" };
  const ys = numeric.flatMap((n, i) => (n && i > 0 ? [i] : []));
  if (!numeric[0] || ys.length === 0) return bars(r, numeric, groups[0] ?? -1);
  const rows = r.rows.flatMap((row) => {
    if (finite(row[0]) === null) return [];
    const group = groups.map((g) => formatCell(row[g])).join(" · ");
    return ys.map((i) => ({
      x: row[0] as number,
      label: group === "" ? r.columns[i] : ys.length === 1 ? group : `${group} ${r.columns[i]}`,
      value: finite(row[i]),
      n: 1,
    }));
  });
  const chart = chartFromRows(
    "quick chart",
    r.columns[0],
    rows,
    ys.map((i) => r.columns[i]).join(", "),
  );
  if (chart.series.length > MAX_QUICK_SERIES) {
    return {
      chart: null,
      note: `no quick chart: ${chart.series.length} lines (one per ${
        groups.map((g) => r.columns[g]).join(", ")
      }) are more than ${MAX_QUICK_SERIES}; filter or aggregate the groups`,
    };
  }
  return { chart };
}

/** One bar per row for each numeric column, the rows named by column `names` (or numbered). */
function bars(r: ResultTable, numeric: readonly boolean[], names: number): QuickChart {
  const ys = numeric.flatMap((n, i) => (n ? [i] : []));
  const chart = chartFromRows(
    "quick chart",
    names < 0 ? "row" : r.columns[names],
    r.rows.flatMap((row, k) =>
      ys.map((i) => ({ x: k, label: r.columns[i], value: finite(row[i]), n: 1 }))
    ),
    ys.map((i) => r.columns[i]).join(", "),
  );
  return {
    chart: {
      ...chart,
      categories: r.rows.map((row, k) => (names < 0 ? String(k) : formatCell(row[names]))),
    },
  };
}
