import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import type { ChartData } from "./chart-data.ts";
import { lineColor } from "./palette.ts";

const BARS = uPlot.paths.bars!({ size: [0.6, 80] });
const STEP_TICKS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000];

/**
 * A uPlot line chart of `data`. On the server it renders the frame (title, size); in the browser
 * it draws, and redraws whenever `version` changes (live updates mutate `data` in place).
 * With `categories` the series are bars. Marker series draw points only: spikes as orange dots, non-finite steps as red crosses at 0.
 *
 * @example
 * ```tsx
 * <LineChart name="grad-wg" data={charts["grad-wg"]} version={n} />
 * ```
 */
export function LineChart(
  { name, data, version = 0, height = 220 }: {
    name: string;
    data: ChartData;
    version?: number;
    height?: number;
  },
) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<{ u: uPlot; shape: string } | null>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const shape = data.series.map((s) => s.label).join("\u0000");
    const columns = [data.x, ...data.series.map((s) => s.y)] as uPlot.AlignedData;
    if (plot.current && plot.current.shape === shape) {
      plot.current.u.setData(columns);
      return;
    }
    plot.current?.u.destroy();
    const lines = data.series.filter((s) => !s.marker).map((s) => s.label);
    const u = new uPlot(
      {
        width: Math.max(300, el.clientWidth),
        height,
        // Bars start at zero and keep half a slot free at either end.
        scales: data.categories
          ? {
            x: { time: false, range: [-0.5, data.categories.length - 0.5] },
            y: { range: (_u: uPlot, min: number, max: number) => [Math.min(0, min), max * 1.05] },
          }
          : { x: { time: false } },
        // Steps are whole numbers: no tick at 0.5.
        axes: [
          data.categories
            ? {
              label: data.xLabel,
              incrs: [1],
              values: (_u: uPlot, ticks: number[]) => ticks.map((t) => data.categories?.[t] ?? ""),
            }
            : { label: data.xLabel, incrs: STEP_TICKS },
          {},
        ],
        legend: { live: true },
        series: [
          { label: data.xLabel },
          ...data.series.map((s) => {
            const owner = lines.indexOf(s.label.replace(/ (spike|non-finite)$/, ""));
            const color = s.marker === "non-finite"
              ? "#d00"
              : s.marker === "spike"
              ? "#f80"
              : lineColor(owner);
            return s.marker
              ? {
                label: s.label,
                stroke: color,
                fill: color,
                paths: () => null,
                points: {
                  show: true,
                  size: s.marker === "spike" ? 9 : 11,
                  fill: color,
                  stroke: color,
                },
              }
              : data.categories
              ? {
                label: s.label,
                stroke: color,
                fill: `${color}99`,
                paths: BARS,
                points: { show: false },
              }
              : {
                label: s.label,
                stroke: color,
                width: 1.5,
                spanGaps: true,
                points: { show: false },
              };
          }),
        ],
      },
      columns,
      el,
    );
    el.dataset.rendered = String(data.x.length);
    plot.current = { u, shape };
  }, [data, version]);
  useEffect(() => () => plot.current?.u.destroy(), []);
  return (
    <figure class="chart" data-chart={name}>
      <figcaption>{data.title}</figcaption>
      <div class="plot" ref={box} style={{ minHeight: `${height + 40}px` }} />
    </figure>
  );
}
