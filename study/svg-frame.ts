/**
 * The parts every static chart shares: the SVG document, escaped text, the palette, the plot
 * frame with its y grid and axis labels, and the legend. Output is deterministic (fixed decimals,
 * no ids or dates), so regenerating a report from the same log gives the same bytes.
 */
import { tickText } from "./svg-scale.ts";

/** Okabe–Ito colours: distinguishable with the common colour-vision deficiencies. */
export const PALETTE = [
  "#0072B2",
  "#D55E00",
  "#009E73",
  "#CC79A7",
  "#E69F00",
  "#56B4E9",
  "#000000",
  "#F0E442",
] as const;

/**
 * The palette colour of the i-th series (cycling).
 *
 * @example
 * ```ts
 * colour(1); // "#D55E00"
 * ```
 */
export function colour(i: number): string {
  return PALETTE[i % PALETTE.length];
}

/**
 * Escapes text for SVG content and attribute values.
 *
 * @example
 * ```ts
 * escapeXml("a < b & c"); // "a &lt; b &amp; c"
 * ```
 */
export function escapeXml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

/**
 * A coordinate with 2 decimals (fixed, so the bytes are reproducible).
 *
 * @example
 * ```ts
 * px(12.34567); // "12.35"
 * ```
 */
export function px(x: number): string {
  return String(Number(x.toFixed(2)));
}

/** The plot area inside the margins. */
export interface PlotArea {
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
}

/** What the frame draws around the plot area. */
export interface FrameSpec {
  readonly width: number;
  readonly height: number;
  readonly area: PlotArea;
  readonly title: string;
  readonly xLabel?: string;
  readonly yLabel: string;
  readonly yTicks: readonly number[];
  readonly y: (v: number) => number;
  /** x tick marks: position in pixels and label. */
  readonly xTicks: readonly { readonly at: number; readonly label: string }[];
  /** Slant the x tick labels (degrees, negative = rising) when they would overlap. */
  readonly xTickAngle?: number;
}

/**
 * The SVG elements of a chart's frame: title, y grid and ticks, x ticks, axis labels.
 *
 * @example
 * ```ts
 * import { linearScale } from "./svg-scale.ts";
 * const area = { left: 64, top: 36, right: 700, bottom: 300 };
 * const body = frame({ width: 720, height: 340, area, title: "t", yLabel: "y", yTicks: [0, 1],
 *   y: linearScale(0, 1, 300, 36), xTicks: [] });
 * ```
 */
export function frame(spec: FrameSpec): string[] {
  const { area, y } = spec;
  const out = [
    `<rect x="0" y="0" width="${spec.width}" height="${spec.height}" fill="#ffffff"/>`,
    `<text x="${px(spec.width / 2)}" y="20" text-anchor="middle" font-size="14" ` +
    `font-weight="bold">${escapeXml(spec.title)}</text>`,
  ];
  for (const t of spec.yTicks) {
    const at = px(y(t));
    out.push(
      `<line x1="${area.left}" y1="${at}" x2="${area.right}" y2="${at}" stroke="#e0e0e0"/>`,
      `<text x="${area.left - 6}" y="${at}" text-anchor="end" dominant-baseline="middle" ` +
        `font-size="11">${escapeXml(tickText(t))}</text>`,
    );
  }
  for (const t of spec.xTicks) {
    const at = px(t.at);
    const labelY = area.bottom + 16;
    const slant = spec.xTickAngle
      ? `text-anchor="end" transform="rotate(${spec.xTickAngle} ${at} ${labelY})"`
      : `text-anchor="middle"`;
    out.push(
      `<line x1="${at}" y1="${area.bottom}" x2="${at}" y2="${area.bottom + 4}" stroke="#333333"/>`,
      `<text x="${at}" y="${labelY}" ${slant} font-size="11">${escapeXml(t.label)}</text>`,
    );
  }
  out.push(
    `<line x1="${area.left}" y1="${area.bottom}" x2="${area.right}" y2="${area.bottom}" ` +
      `stroke="#333333"/>`,
    `<line x1="${area.left}" y1="${area.top}" x2="${area.left}" y2="${area.bottom}" ` +
      `stroke="#333333"/>`,
    `<text x="14" y="${px((area.top + area.bottom) / 2)}" text-anchor="middle" font-size="12" ` +
      `transform="rotate(-90 14 ${px((area.top + area.bottom) / 2)})">` +
      `${escapeXml(spec.yLabel)}</text>`,
  );
  if (spec.xLabel) {
    out.push(
      `<text x="${px((area.left + area.right) / 2)}" y="${spec.height - 8}" ` +
        `text-anchor="middle" font-size="12">${escapeXml(spec.xLabel)}</text>`,
    );
  }
  return out;
}

/**
 * A legend: one coloured swatch and label per entry, in a column at (x, y).
 *
 * @example
 * ```ts
 * legend([{ label: "grpo", colour: colour(0) }], 610, 36);
 * ```
 */
export function legend(
  entries: readonly { readonly label: string; readonly colour: string }[],
  x: number,
  y: number,
): string[] {
  return entries.flatMap((e, i) => {
    const top = y + i * 16;
    return [
      `<rect x="${px(x)}" y="${px(top)}" width="12" height="10" fill="${e.colour}"/>`,
      `<text x="${px(x + 16)}" y="${px(top + 9)}" font-size="11">${escapeXml(e.label)}</text>`,
    ];
  });
}

/**
 * The SVG document around `body`.
 *
 * @example
 * ```ts
 * declare const spec: FrameSpec;
 * svgDocument(720, 340, frame(spec));
 * ```
 */
export function svgDocument(width: number, height: number, body: readonly string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
    `viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    ...body.map((line) => `  ${line}`),
    "</svg>",
    "",
  ].join("\n");
}
