import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import { type ChartData, type ChartSeries, lineLabels } from "./chart-data.ts";
import { type ChartView, PLAIN_VIEW, shownSeries } from "./chart-view.ts";
import { MARKER_COLORS, SeriesPalette } from "./palette.ts";

const STEP_TICKS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000];

/**
 * The index of a series' only value, or null when it has none or several: a line through one
 * point draws nothing (a run in its first step), so that point is drawn as a dot.
 */
function soleValue(u: uPlot, si: number): number[] | null {
  const ys = u.data[si];
  let at = -1;
  for (let i = 0; i < ys.length; i++) {
    if (ys[i] === null || ys[i] === undefined) continue;
    if (at >= 0) return null;
    at = i;
  }
  return at < 0 ? null : [at];
}

/** The x range: uPlot's own, except around a single step, which it would put at 0 of 0-100. */
function loneStep(u: uPlot, min: number, max: number): uPlot.Range.MinMax {
  const xs = u.data[0];
  return xs.length === 1 ? [xs[0] - 0.5, xs[0] + 0.5] : [min, max];
}

/**
 * The bars of the k-th of n bar series: each narrower than the one before, drawn over it, so
 * that a short bar beside a tall one (turns and tokens per agent) stays in sight.
 */
function nestedBars(k: number, n: number): uPlot.Series.PathBuilder {
  const share = 1 - k / n;
  return uPlot.paths.bars!({ size: [0.6 * share, 80 * share] });
}

/** [the power of 10 below `min`, the power of 10 at or above `max`] */
function decades(min: number, max: number): uPlot.Range.MinMax {
  return [10 ** Math.floor(Math.log10(min) - 1e-9), 10 ** Math.ceil(Math.log10(max))];
}

/**
 * The y scale. Bars rise from 0, or on a log axis from the decade below the lowest bar (which
 * would otherwise have no height).
 */
function yScale(bars: boolean, logY: boolean): uPlot.Scale {
  if (logY) return bars ? { distr: 3, range: (_u, min, max) => decades(min, max) } : { distr: 3 };
  return bars ? { range: (_u, min, max) => [Math.min(0, min), max * 1.05] } : {};
}

function seriesOptions(
  s: ChartSeries,
  color: string,
  bars: { readonly k: number; readonly n: number } | null,
): uPlot.Series {
  if (s.marker) {
    return {
      label: s.label,
      stroke: color,
      fill: color,
      paths: () => null,
      points: { show: true, size: s.marker === "spike" ? 9 : 11, fill: color, stroke: color },
    };
  }
  if (bars) {
    return {
      label: s.label,
      stroke: color,
      fill: `${color}99`,
      paths: nestedBars(bars.k, bars.n),
      points: { show: false },
    };
  }
  // A part of another line (one run of a group) is thin and faint in that line's colour.
  const [stroke, width] = s.of === undefined ? [color, 1.5] : [`${color}66`, 1];
  return {
    label: s.label,
    stroke,
    width,
    spanGaps: true,
    points: { show: false, filter: soleValue, size: 7, fill: stroke, stroke },
  };
}

function plotOptions(
  data: ChartData,
  palette: SeriesPalette,
  view: ChartView,
  size: { width: number; height: number },
): uPlot.Options {
  const bars = !!data.categories;
  const barSeries = data.series.filter((s) => !s.marker);
  return {
    ...size,
    scales: {
      // Bars keep half a slot free at either end.
      x: bars
        ? { time: false, range: [-0.5, data.categories!.length - 0.5] }
        : { time: false, range: loneStep },
      y: yScale(bars, view.logY),
    },
    axes: [
      bars
        ? {
          label: data.xLabel,
          incrs: [1],
          values: (_u: uPlot, ticks: number[]) => ticks.map((t) => data.categories?.[t] ?? ""),
        }
        // Steps are whole numbers: no tick at 0.5.
        : { label: data.xLabel, incrs: STEP_TICKS },
      { label: data.yLabel },
    ],
    legend: { live: true },
    series: [
      { label: data.xLabel },
      ...data.series.map((s) =>
        seriesOptions(
          s,
          s.marker ? MARKER_COLORS[s.marker] : palette.color(s.of ?? s.label),
          bars ? { k: barSeries.indexOf(s), n: barSeries.length } : null,
        )
      ),
    ],
  };
}

/**
 * A uPlot line chart of `data`. On the server it renders the frame (title, size); in the browser
 * it draws, and redraws whenever `version` changes (live updates mutate `data` in place) or the
 * `view` does. With `categories` the series are bars. Marker series draw points only: spikes as
 * orange dots, non-finite steps as red dots at 0. A line with a single value draws it as a dot.
 * A part of another line (`of`: one run of a group's mean) is drawn thin in that line's colour.
 * Lines take their colour from `palette` by label (pass the page's palette so that an agent has
 * one colour in every chart; without it the chart colours its own lines).
 *
 * @example
 * ```tsx
 * import type { ChartData } from "./chart-data.ts";
 * import type { ChartView } from "./chart-view.ts";
 * import type { SeriesPalette } from "./palette.ts";
 * declare const charts: Readonly<Record<string, ChartData>>; // a run's charts by name
 * declare const n: number; // bumped by each live update
 * declare const p: SeriesPalette; // the page's palette
 * declare const v: ChartView; // the chosen smoothing and log scale
 * <LineChart name="grad-wg" data={charts["grad-wg"]} version={n} palette={p} view={v} />
 * ```
 */
export function LineChart(
  { name, data, version = 0, height = 220, palette, view = PLAIN_VIEW }: {
    name: string;
    data: ChartData;
    version?: number;
    height?: number;
    palette?: SeriesPalette;
    view?: ChartView;
  },
) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<{ u: uPlot; shape: string } | null>(null);
  const own = useRef<SeriesPalette | null>(null);
  const colors = palette ?? (own.current ??= new SeriesPalette(lineLabels(data)));
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    // A new series or another y scale needs a new plot; new values only new data.
    const shape = [view.logY ? "log" : "linear", ...data.series.map((s) => s.label)].join("\u0000");
    const columns = [data.x, ...shownSeries(data, view)] as uPlot.AlignedData;
    if (plot.current && plot.current.shape === shape) {
      plot.current.u.setData(columns);
      return;
    }
    plot.current?.u.destroy();
    const size = { width: Math.max(300, el.clientWidth), height };
    const u = new uPlot(plotOptions(data, colors, view, size), columns, el);
    el.dataset.rendered = String(data.x.length);
    plot.current = { u, shape };
  }, [data, version, view.smoothing, view.logY]);
  useEffect(() => () => plot.current?.u.destroy(), []);
  return (
    <figure class="chart" data-chart={name}>
      <figcaption>{data.title}</figcaption>
      <div class="plot" ref={box} style={{ minHeight: `${height + 40}px` }} />
    </figure>
  );
}
