/**
 * A static grouped bar chart (SVG) with error bars: one group per category (a cell), one bar per
 * series within it (a metric or a debate round), each with its interval (e.g. a 95% CI). A bar
 * whose value is not finite is left out and marked "n/a", never drawn as zero.
 */
import { ChartInputError } from "./chart-error.ts";
import { colour, escapeXml, frame, legend, type PlotArea, px, svgDocument } from "./svg-frame.ts";
import { linearScale, niceTicks } from "./svg-scale.ts";

/** One bar: its series, value and optional interval. */
export interface Bar {
  readonly series: string;
  readonly value: number;
  readonly low?: number;
  readonly high?: number;
}

/** One category's bars. */
export interface BarGroup {
  readonly label: string;
  readonly bars: readonly Bar[];
}

/** A grouped bar chart. */
export interface BarChartSpec {
  readonly title: string;
  readonly yLabel: string;
  readonly groups: readonly BarGroup[];
  readonly width?: number;
  readonly height?: number;
}

/**
 * Renders a grouped bar chart as an SVG document; series keep one position and colour across
 * groups (in order of first appearance), so a missing bar leaves a gap.
 *
 * @example
 * ```ts
 * const svg = barChartSvg({
 *   title: "accuracy", yLabel: "%",
 *   groups: [{ label: "grpo", bars: [{ series: "avg@16", value: 41.9, low: 41.3, high: 42.5 }] }],
 * });
 * ```
 */
export function barChartSvg(spec: BarChartSpec): string {
  const width = spec.width ?? 720;
  if (spec.groups.length === 0) throw new ChartInputError(spec.title, "groups", "is empty");
  const series = [...new Set(spec.groups.flatMap((g) => g.bars.map((b) => b.series)))];
  if (series.length === 0) throw new ChartInputError(spec.title, "groups", "have no bars");
  const bars = spec.groups.flatMap((g) => g.bars);
  const extent = bars.flatMap((b) => [b.value, b.low ?? b.value, b.high ?? b.value])
    .filter(Number.isFinite);
  if (extent.length === 0) {
    throw new ChartInputError(spec.title, "groups", "have no finite value to draw");
  }
  const legendWidth = 24 + 6.5 * Math.max(...series.map((s) => s.length));
  const plotWidth = width - 80 - legendWidth;
  const groupWidth = plotWidth / spec.groups.length;
  const longest = Math.max(...spec.groups.map((g) => g.label.length));
  // Slanted labels when straight ones would run into each other.
  const slant = longest * 6.5 > groupWidth - 4;
  const height = spec.height ?? (slant ? 340 + Math.min(120, longest * 4.5) : 340);
  const area: PlotArea = {
    left: 64,
    top: 36,
    right: 64 + plotWidth,
    bottom: height - (slant ? 30 + Math.min(120, longest * 4.5) : 44),
  };
  const yTicks = niceTicks(Math.min(0, ...extent), Math.max(...extent));
  const y = linearScale(yTicks[0], yTicks[yTicks.length - 1], area.bottom, area.top);
  const body = frame({
    width,
    height,
    area,
    title: spec.title,
    yLabel: spec.yLabel,
    yTicks,
    y,
    xTicks: spec.groups.map((g, i) => ({ at: area.left + groupWidth * (i + 0.5), label: g.label })),
    xTickAngle: slant ? -30 : undefined,
  });
  const barWidth = (groupWidth * 0.8) / series.length;
  const zero = y(Math.max(0, yTicks[0]));
  spec.groups.forEach((g, i) => {
    for (const b of g.bars) {
      const j = series.indexOf(b.series);
      const left = area.left + groupWidth * i + groupWidth * 0.1 + barWidth * j;
      const mid = left + barWidth / 2;
      if (!Number.isFinite(b.value)) {
        body.push(
          `<text x="${px(mid)}" y="${px(zero - 4)}" text-anchor="middle" font-size="10">n/a</text>`,
        );
        continue;
      }
      const top = Math.min(y(b.value), zero);
      body.push(
        `<rect x="${px(left)}" y="${px(top)}" width="${px(barWidth * 0.92)}" ` +
          `height="${px(Math.abs(zero - y(b.value)))}" fill="${colour(j)}">` +
          `<title>${escapeXml(`${g.label} ${b.series}: ${b.value}`)}</title></rect>`,
      );
      if (Number.isFinite(b.low) && Number.isFinite(b.high)) {
        const lo = px(y(b.low!));
        const hi = px(y(b.high!));
        const c = px(left + barWidth * 0.46);
        const cap = (at: string) =>
          `<line x1="${px(left + barWidth * 0.26)}" y1="${at}" x2="${
            px(left + barWidth * 0.66)
          }" ` +
          `y2="${at}" stroke="#222222"/>`;
        body.push(
          `<line x1="${c}" y1="${lo}" x2="${c}" y2="${hi}" stroke="#222222"/>`,
          cap(lo),
          cap(hi),
        );
      }
    }
  });
  body.push(
    ...legend(series.map((s, j) => ({ label: s, colour: colour(j) })), area.right + 12, area.top),
  );
  return svgDocument(width, height, body);
}
