/**
 * The data of one chart in the shape uPlot draws: a shared x column and aligned series, with
 * the sample count behind each mean so that live events can update a mean in place.
 */

/** One line of a chart; `n[i]` samples were averaged into `y[i]` (for mean series). */
export interface ChartSeries {
  readonly label: string;
  readonly y: (number | null)[];
  readonly n: number[];
  /** draw points only: spikes and non-finite steps */
  readonly marker?: "spike" | "non-finite";
  /** the label of the line this one is a part of (one run of a group's mean): drawn thin in its colour */
  readonly of?: string;
}

/** A chart's data. */
export interface ChartData {
  readonly kind: "chart-data";
  readonly title: string;
  readonly xLabel: string;
  /** what the y axis measures, drawn beside it (e.g. "gradient norm") */
  readonly yLabel?: string;
  readonly x: number[];
  readonly series: ChartSeries[];
  /** names of x = 0, 1, 2, ...: drawn as bars with these tick labels */
  readonly categories?: readonly string[];
}

/** How a live value changes a chart point. */
export type UpdateMode = "mean" | "set";

/** One point change carried by a live event. */
export interface ChartUpdate {
  readonly chart: string;
  readonly x: number;
  readonly label: string;
  readonly value: number;
  readonly mode: UpdateMode;
  readonly marker?: ChartSeries["marker"];
}

/**
 * Builds a chart from long rows (x, label, value, count), e.g. a GROUP BY step, agent result.
 *
 * @example
 * ```ts
 * chartFromRows("Reward", "step", [{ x: 0, label: "reward", value: 0.5, n: 8 }], "reward");
 * ```
 */
export function chartFromRows(
  title: string,
  xLabel: string,
  rows: readonly { x: number; label: string; value: number | null; n: number }[],
  yLabel?: string,
): ChartData {
  const chart: ChartData = {
    kind: "chart-data",
    title,
    xLabel,
    ...(yLabel === undefined ? {} : { yLabel }),
    x: [],
    series: [],
  };
  for (const r of rows) {
    if (r.value === null) continue;
    applyUpdate(chart, { chart: title, x: r.x, label: r.label, value: r.value, mode: "set" }, r.n);
  }
  // Lines in label order: every chart lists the same agents in the same order.
  chart.series.sort((a, b) => a.label.localeCompare(b.label));
  return chart;
}

/** Index of `x` in the sorted column, inserting it (with empty series cells) when absent. */
function slot(chart: ChartData, x: number): number {
  const xs = chart.x;
  let lo = 0, hi = xs.length;
  if (hi > 0 && xs[hi - 1] < x) lo = hi;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  if (xs[lo] !== x) {
    xs.splice(lo, 0, x);
    for (const s of chart.series) {
      s.y.splice(lo, 0, null);
      s.n.splice(lo, 0, 0);
    }
  }
  return lo;
}

/**
 * Applies one update in place: `set` replaces the point, `mean` folds the value into the mean
 * of the `n` samples already there. Returns the chart.
 *
 * @example
 * ```ts
 * declare const chart: ChartData;
 * applyUpdate(chart, { chart: "reward", x: 3, label: "reward", value: 1, mode: "mean" });
 * ```
 */
export function applyUpdate(chart: ChartData, u: ChartUpdate, count = 1): ChartData {
  const i = slot(chart, u.x);
  let s = chart.series.find((c) => c.label === u.label);
  if (!s) {
    s = {
      label: u.label,
      y: chart.x.map(() => null),
      n: chart.x.map(() => 0),
      ...(u.marker ? { marker: u.marker } : {}),
    };
    chart.series.push(s);
  }
  const old = s.y[i];
  if (u.mode === "mean" && old !== null && s.n[i] > 0) {
    s.y[i] = (old * s.n[i] + u.value * count) / (s.n[i] + count);
    s.n[i] += count;
  } else {
    s.y[i] = u.value;
    s.n[i] = count;
  }
  return chart;
}

/**
 * The chart as a page ships it: values at 6 significant digits (beyond what a plot shows; half
 * the bytes of full doubles) and, unless `counts` (live pages fold new values into means),
 * without sample counts.
 *
 * @example
 * ```ts
 * declare const chart: ChartData;
 * forPage(chart, { counts: false }).series[0].n; // []
 * ```
 */
export function forPage(chart: ChartData, options: { readonly counts: boolean }): ChartData {
  return {
    ...chart,
    series: chart.series.map((s) => ({
      ...s,
      y: s.y.map((v) => (v === null ? null : Number(v.toPrecision(6)))),
      n: options.counts ? s.n : [],
    })),
  };
}

/**
 * The labels of a chart's lines that have a colour of their own (markers and parts of another
 * line left out).
 *
 * @example
 * ```ts
 * declare const charts: Record<string, ChartData>;
 * lineLabels(charts["grad-wg"]); // ["wg-critic", "wg-solver"]
 * ```
 */
export function lineLabels(chart: ChartData): string[] {
  return chart.series.flatMap((s) => (s.marker || s.of !== undefined ? [] : [s.label]));
}
