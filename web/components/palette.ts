/**
 * Line colours keyed by what a line stands for (an agent, a worker group, a run group), so that
 * "solver" has one colour in every chart of a page.
 */

/**
 * Distinguishable and readable on white. No red, orange or brown: those are the non-finite and
 * spike markers' hues (MARKER_COLORS), which must never be mistaken for a line.
 */
const COLORS = [
  "#1f77b4",
  "#2ca02c",
  "#9467bd",
  "#17becf",
  "#e377c2",
  "#7f7f7f",
  "#bcbd22",
  "#393b79",
  "#637939",
  "#7b4173",
];

/** Fixed colours of the marker series (chart-data's ChartSeries.marker). */
export const MARKER_COLORS = Object.freeze({ spike: "#ff8800", "non-finite": "#dd0000" });

/**
 * Colours of a page, made from the labels of all its charts (a label once per chart that draws
 * it): the labels in most charts (the agents) take the first colours, ties in label order, so
 * that pages holding the same charts colour alike. A label first seen later (an agent appearing
 * in a live update) takes the next colour, and no label ever changes colour.
 *
 * @example
 * ```ts
 * const palette = new SeriesPalette(["solver", "critic", "critic", "wg-critic", "solver"]);
 * palette.color("critic"); // "#1f77b4", in every chart that asks
 * ```
 */
export class SeriesPalette {
  readonly #colors = new Map<string, string>();

  constructor(labels: Iterable<string> = []) {
    const charts = new Map<string, number>();
    for (const label of labels) charts.set(label, (charts.get(label) ?? 0) + 1);
    const order = [...charts].sort(([a, m], [b, n]) => n - m || a.localeCompare(b));
    for (const [label] of order) this.color(label);
  }

  /** The colour of `label`, assigning the next one when the label is new. */
  color(label: string): string {
    let c = this.#colors.get(label);
    if (c === undefined) {
      c = COLORS[this.#colors.size % COLORS.length];
      this.#colors.set(label, c);
    }
    return c;
  }
}
