import type { ChartData } from "../components/chart-data.ts";
import { LineChart } from "../components/line-chart.tsx";

/**
 * Static charts side by side (the Compare page's overlaid curves).
 *
 * @example
 * ```tsx
 * <Island name="chart-set" component={ChartSet} props={{ charts: [a, b] }} />
 * ```
 */
export function ChartSet({ charts }: { charts: readonly ChartData[] }) {
  return (
    <div class="chart-grid">
      {charts.map((c, i) => <LineChart key={i} name={`curve-${i}`} data={c} />)}
    </div>
  );
}
