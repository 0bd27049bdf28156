import { gradientSpikes, SPIKE_MULTIPLE } from "../../analysis/mod.ts";
import type { ChartUpdate } from "../components/chart-data.ts";
import { markerLabel } from "./chart-names.ts";

/** One optimizer update's gradient norm on a line of a gradient-norm chart. */
export interface NormPoint {
  readonly x: number;
  readonly label: string;
  readonly norm: number;
}

/**
 * The markers of a gradient-norm chart from its lines' norms, one point per optimizer update in
 * the order applied: a spike marker at each step with an update that is a spike by the analysis
 * rule (`gradientSpikes`, judged over the line's updates as the report and the study judge
 * them), drawn at the largest such norm; a non-finite marker at 0 at each step with a skipped
 * update.
 *
 * @example
 * ```ts
 * normMarkers("grad-wg", [{ x: 0, label: "wg0", norm: 1 }, { x: 1, label: "wg0", norm: 50 }]);
 * // [{ chart: "grad-wg", x: 1, label: "wg0 spike", value: 50, mode: "set", marker: "spike" }]
 * ```
 */
export function normMarkers(chart: string, points: readonly NormPoint[]): ChartUpdate[] {
  const markers = new Map<string, ChartUpdate>();
  for (const [label, line] of Map.groupBy(points, (p) => p.label)) {
    const spikes = gradientSpikes(line.map((p) => p.norm), SPIKE_MULTIPLE);
    line.forEach((p, i) => {
      const marker = spikes[i] ? "spike" : Number.isFinite(p.norm) ? null : "non-finite";
      if (marker === null) return;
      const value = marker === "spike" ? p.norm : 0;
      const key = `${p.x}\u0000${label}\u0000${marker}`;
      if ((markers.get(key)?.value ?? -Infinity) >= value) return;
      markers.set(key, {
        chart,
        x: p.x,
        label: markerLabel(label, marker),
        value,
        mode: "set",
        marker,
      });
    });
  }
  return [...markers.values()];
}
