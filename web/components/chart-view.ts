/**
 * How a chart set is viewed (smoothing, log scale) and the values each series draws under it.
 * The chart's data is never changed: live updates keep folding raw values into it.
 */
import type { ChartData } from "./chart-data.ts";

/** The view a chart set's controls choose. */
export interface ChartView {
  /** EMA weight in [0, 1): 0 draws the raw values, 0.9 a strongly smoothed line */
  readonly smoothing: number;
  /** logarithmic y axis (values <= 0 are not drawn) */
  readonly logY: boolean;
}

/** Raw values on a linear axis. */
export const PLAIN_VIEW: ChartView = Object.freeze({ smoothing: 0, logY: false });

/** A smoothing weight outside [0, 1). */
export class SmoothingRangeError extends RangeError {
  override name = "SmoothingRangeError";
  constructor(readonly weight: number) {
    super(`smoothing weight ${weight} is outside [0, 1): use 0 for none, 0.99 at most`);
  }
}

/**
 * Exponential moving average as TensorBoard draws it: `s = w·s + (1−w)·y` over the finite
 * values in x order, divided by `1 − w^k` after k values so that the start is not pulled
 * towards zero. Missing values stay missing and do not move the average.
 *
 * @example
 * ```ts
 * ema([1, null, 3], 0.5); // [1, null, 2.333…]
 * ```
 */
export function ema(ys: readonly (number | null)[], weight: number): (number | null)[] {
  if (!(weight >= 0 && weight < 1)) throw new SmoothingRangeError(weight);
  let last = 0;
  let k = 0;
  return ys.map((y) => {
    if (y === null || !Number.isFinite(y)) return y;
    last = weight * last + (1 - weight) * y;
    k++;
    return last / (1 - weight ** k);
  });
}

/**
 * The y columns `data` draws under `view`, one per series: lines smoothed (bars and markers keep
 * their values: a spike is where the raw norm was); on a log axis values <= 0 dropped, and
 * non-finite markers, drawn at 0 on a linear axis, put on the lowest line value instead.
 *
 * @example
 * ```ts
 * import type { ChartData } from "./chart-data.ts";
 * declare const chart: ChartData;
 * shownSeries(chart, { smoothing: 0.6, logY: true })[0]; // the first series as drawn
 * ```
 */
export function shownSeries(data: ChartData, view: ChartView): (number | null)[][] {
  const lines = data.series.map((s) =>
    s.marker || data.categories || view.smoothing === 0 ? s.y : ema(s.y, view.smoothing)
  );
  if (!view.logY) return lines;
  const positive = (v: number | null) => (v !== null && v > 0 ? v : null);
  let floor = Infinity;
  data.series.forEach((s, i) => {
    if (s.marker) return;
    for (const v of lines[i]) if (v !== null && v > 0 && v < floor) floor = v;
  });
  return data.series.map((s, i) =>
    s.marker === "non-finite"
      ? s.y.map((v) => (v === null || floor === Infinity ? null : floor))
      : lines[i].map(positive)
  );
}
