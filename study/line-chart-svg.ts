/**
 * A static line chart (SVG) of values over steps: one line per series, faint lines for the
 * individual seeds behind their mean, an optional dashed reference level, and a × at the top edge
 * where a value is NaN or infinite (a skipped, non-finite step) instead of a silent gap.
 */
import { ChartInputError } from "./chart-error.ts";
import { colour, escapeXml, frame, legend, type PlotArea, px, svgDocument } from "./svg-frame.ts";
import { linearScale, niceTicks, tickText } from "./svg-scale.ts";

/** One line. Series sharing a `colour` index are drawn in the same colour. */
export interface LineSeries {
  readonly name: string;
  readonly points: readonly { readonly x: number; readonly y: number }[];
  readonly colour: number;
  /** A thin, translucent line left out of the legend (e.g. one seed behind the mean). */
  readonly faint?: boolean;
}

/** A line chart. */
export interface LineChartSpec {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly LineSeries[];
  /** A dashed horizontal line, e.g. the multiplier 1 that means no mismatch. */
  readonly reference?: { readonly y: number; readonly label: string };
  readonly width?: number;
  readonly height?: number;
}

function segments(
  points: LineSeries["points"],
  x: (v: number) => number,
  y: (v: number) => number,
): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  for (const p of points) {
    if (Number.isFinite(p.y)) current.push(`${px(x(p.x))},${px(y(p.y))}`);
    else if (current.length > 0) {
      out.push(current);
      current = [];
    }
  }
  if (current.length > 0) out.push(current);
  return out;
}

/**
 * Renders a line chart as an SVG document.
 *
 * @example
 * ```ts
 * const svg = lineChartSvg({
 *   title: "solver gradient norm", xLabel: "step", yLabel: "‖g‖",
 *   series: [{ name: "grpo", colour: 0, points: [{ x: 0, y: 1.2 }, { x: 1, y: 0.9 }] }],
 * });
 * ```
 */
export function lineChartSvg(spec: LineChartSpec): string {
  const width = spec.width ?? 720;
  const height = spec.height ?? 360;
  if (spec.series.length === 0) throw new ChartInputError(spec.title, "series", "is empty");
  const all = spec.series.flatMap((s) => s.points);
  const xs = all.map((p) => p.x).filter(Number.isFinite);
  const ys = all.map((p) => p.y).filter(Number.isFinite);
  if (ys.length === 0 || xs.length === 0) {
    throw new ChartInputError(spec.title, "series", "has no finite point to draw");
  }
  const named = spec.series.filter((s) => !s.faint);
  const legendWidth = named.length > 0
    ? 24 + 6.5 * Math.max(...named.map((s) => s.name.length))
    : 0;
  const area: PlotArea = {
    left: 64,
    top: 36,
    right: width - 16 - legendWidth,
    bottom: height - 44,
  };
  const reference = spec.reference ? [spec.reference.y] : [];
  const yTicks = niceTicks(Math.min(0, ...ys, ...reference), Math.max(...ys, ...reference));
  const y = linearScale(yTicks[0], yTicks[yTicks.length - 1], area.bottom, area.top);
  const xMin = Math.min(...xs);
  const xMax = Math.max(...xs);
  // Steps are integers: no tick between two steps.
  const integral = xs.every(Number.isInteger);
  const xTickValues = niceTicks(xMin, xMax, 8)
    .filter((t) => t >= xMin && t <= xMax && (!integral || Number.isInteger(t)));
  const x = linearScale(xMin, xMax, area.left, area.right);
  const body = frame({
    width,
    height,
    area,
    title: spec.title,
    xLabel: spec.xLabel,
    yLabel: spec.yLabel,
    yTicks,
    y,
    xTicks: xTickValues.map((t) => ({ at: x(t), label: tickText(t) })),
  });
  if (spec.reference) {
    const at = px(y(spec.reference.y));
    body.push(
      `<line x1="${area.left}" y1="${at}" x2="${area.right}" y2="${at}" stroke="#555555" ` +
        `stroke-dasharray="6 4"/>`,
      `<text x="${area.right - 4}" y="${px(y(spec.reference.y) - 4)}" text-anchor="end" ` +
        `font-size="11" fill="#555555">${escapeXml(spec.reference.label)}</text>`,
    );
  }
  // Faint lines first, so the named lines are drawn over them.
  const ordered = [...spec.series.filter((s) => s.faint), ...named];
  for (const s of ordered) {
    const stroke = colour(s.colour);
    const style = s.faint ? `stroke-width="1" stroke-opacity="0.35"` : `stroke-width="2"`;
    for (const seg of segments(s.points, x, y)) {
      if (seg.length === 1) {
        const [cx, cy] = seg[0].split(",");
        body.push(`<circle cx="${cx}" cy="${cy}" r="2" fill="${stroke}"/>`);
      } else {
        body.push(
          `<polyline points="${seg.join(" ")}" fill="none" stroke="${stroke}" ${style}/>`,
        );
      }
    }
    for (const p of s.points.filter((p) => Number.isFinite(p.x) && !Number.isFinite(p.y))) {
      body.push(
        `<text x="${px(x(p.x))}" y="${area.top + 4}" text-anchor="middle" font-size="12" ` +
          `fill="${stroke}">×</text>`,
      );
    }
  }
  body.push(
    ...legend(
      named.map((s) => ({ label: s.name, colour: colour(s.colour) })),
      area.right + 12,
      area.top,
    ),
  );
  return svgDocument(width, height, body);
}
