import { useRef, useState } from "preact/hooks";
import { type ChartData, lineLabels } from "./chart-data.ts";
import { type ChartView, PLAIN_VIEW } from "./chart-view.ts";
import { LineChart } from "./line-chart.tsx";
import { SeriesPalette } from "./palette.ts";

/** One chart of a set, by the name its figure carries (`data-chart`). */
export interface NamedChart {
  readonly name: string;
  readonly data: ChartData;
}

/**
 * The smoothing slider and log-scale toggle of a chart set.
 *
 * @example
 * ```tsx
 * import { useState } from "preact/hooks";
 * import { type ChartView, PLAIN_VIEW } from "./chart-view.ts";
 * function Controls() {
 *   const [view, setView] = useState<ChartView>(PLAIN_VIEW);
 *   return <ChartViewControls view={view} onChange={setView} />;
 * }
 * ```
 */
export function ChartViewControls(
  { view, onChange }: { view: ChartView; onChange: (view: ChartView) => void },
) {
  return (
    <div class="toolbar chart-controls">
      <label title="exponential moving average of every line (markers keep their raw values)">
        smoothing{" "}
        <input
          type="range"
          name="smoothing"
          min={0}
          max={0.99}
          step={0.01}
          value={view.smoothing}
          onInput={(e) =>
            onChange({ ...view, smoothing: Number((e.target as HTMLInputElement).value) })}
        />{" "}
        <output data-smoothing={view.smoothing}>
          {view.smoothing === 0 ? "off" : view.smoothing.toFixed(2)}
        </output>
      </label>
      <label title="logarithmic y axis; values at or below 0 are not drawn">
        <input
          type="checkbox"
          name="log-y"
          checked={view.logY}
          onChange={(e) => onChange({ ...view, logY: (e.target as HTMLInputElement).checked })}
        />{" "}
        log y
      </label>
    </div>
  );
}

/**
 * Charts side by side sharing one palette (a label has one colour in all of them, and keeps it
 * when live updates add lines) and one view (smoothing, log scale) chosen above them.
 *
 * @example
 * ```tsx
 * import type { ChartData } from "./chart-data.ts";
 * declare const reward: ChartData; // the reward chart's lines
 * declare const grads: ChartData; // gradient norm by worker group
 * <ChartGrid charts={[{ name: "reward", data: reward }, { name: "grad-wg", data: grads }]} />
 * ```
 */
export function ChartGrid(
  { charts, version = 0, height }: {
    charts: readonly NamedChart[];
    version?: number;
    height?: number;
  },
) {
  const palette = useRef<SeriesPalette | null>(null);
  palette.current ??= new SeriesPalette(charts.flatMap((c) => lineLabels(c.data)));
  const [view, setView] = useState<ChartView>(PLAIN_VIEW);
  return (
    <div class="chart-set">
      <ChartViewControls view={view} onChange={setView} />
      <div class="chart-grid">
        {charts.map((c) => (
          <LineChart
            key={c.name}
            name={c.name}
            data={c.data}
            version={version}
            height={height}
            palette={palette.current!}
            view={view}
          />
        ))}
      </div>
    </div>
  );
}
