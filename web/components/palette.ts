/** Line colours, distinguishable and readable on white. */
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b"];

/** The colour of the i-th line of a chart. */
export function lineColor(i: number): string {
  return COLORS[i % COLORS.length];
}
