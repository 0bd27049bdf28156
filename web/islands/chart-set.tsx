import type { ChartData } from "../components/chart-data.ts";
import { ChartGrid } from "../components/chart-grid.tsx";

/**
 * Static charts side by side (the Compare page's overlaid curves), one colour per group in all
 * of them, with smoothing and a log scale to choose.
 *
 * @example
 * ```tsx
 * import type { ChartData } from "../components/chart-data.ts";
 * import { Island } from "../components/island.tsx";
 * declare const a: ChartData; // one group's curves
 * declare const b: ChartData; // another's, coloured alike
 * <Island name="chart-set" component={ChartSet} props={{ charts: [a, b] }} />
 * ```
 */
export function ChartSet({ charts }: { charts: readonly ChartData[] }) {
  return <ChartGrid charts={charts.map((data, i) => ({ name: `curve-${i}`, data }))} />;
}
