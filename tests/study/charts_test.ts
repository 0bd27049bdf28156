import assert from "node:assert/strict";
import { barChartSvg } from "../../study/bar-chart-svg.ts";
import { ChartInputError } from "../../study/chart-error.ts";
import { lineChartSvg } from "../../study/line-chart-svg.ts";
import { linearScale, niceTicks, tickText } from "../../study/svg-scale.ts";

/** Checks that every tag is closed in order (the SVG is well-formed XML as far as tags go). */
function assertWellFormed(svg: string): void {
  const stack: string[] = [];
  for (const m of svg.matchAll(/<(\/?)([a-zA-Z]+)[^>]*?(\/?)>/g)) {
    const [, closing, name, selfClosing] = m;
    if (selfClosing) continue;
    if (closing) assert.equal(stack.pop(), name, `unbalanced </${name}>`);
    else stack.push(name);
  }
  assert.deepEqual(stack, [], "unclosed tags");
  assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  // No raw ampersand or angle bracket outside of markup.
  assert.doesNotMatch(svg.replace(/<[^>]*>/g, ""), /[<>]|&(?!amp;|lt;|gt;|quot;)/);
}

const count = (svg: string, tag: string) => svg.match(new RegExp(`<${tag}\\b`, "g"))?.length ?? 0;

/** Attribute values of every `<tag ...>` in document order. */
function attrs(svg: string, tag: string, name: string): number[] {
  return [...svg.matchAll(new RegExp(`<${tag}\\b[^>]*\\b${name}="([^"]+)"`, "g"))].map((m) =>
    Number(m[1])
  );
}

Deno.test("svg scale: nice ticks, linear map, tick text", () => {
  assert.deepEqual(niceTicks(0, 0.93, 5), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assert.deepEqual(niceTicks(0, 19, 8), [0, 5, 10, 15, 20]);
  assert.deepEqual(niceTicks(-3, 7, 5), [-4, -2, 0, 2, 4, 6, 8]);
  // A flat all-zero series still gets an axis from 0.
  assert.deepEqual(niceTicks(0, 0, 5), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  const flat = niceTicks(4, 4, 4);
  assert.ok(flat[0] <= 4 && flat.at(-1)! >= 4 && flat.length >= 2);
  assert.throws(() => niceTicks(0, Infinity), RangeError);
  assert.equal(linearScale(0, 10, 100, 0)(2.5), 75);
  assert.equal(linearScale(3, 3, 0, 10)(3), 5);
  assert.equal(tickText(0.30000000000000004), "0.3");
  assert.equal(tickText(123456), "1.2e+5");
});

Deno.test("line chart: lines, faint seeds, reference, non-finite marks, escaping", () => {
  const spec = {
    title: "grad <norm> & spikes",
    xLabel: "step",
    yLabel: "norm",
    series: [
      { name: "grpo seed 0", colour: 0, faint: true, points: [{ x: 0, y: 1 }, { x: 1, y: 3 }] },
      {
        name: "grpo (mean)",
        colour: 0,
        points: [{ x: 0, y: 1 }, { x: 1, y: 2 }, { x: 2, y: NaN }, { x: 3, y: 4 }, { x: 4, y: 5 }],
      },
      { name: "dr-mas (mean)", colour: 1, points: [{ x: 0, y: 0.5 }, { x: 4, y: 0.5 }] },
    ],
    reference: { y: 1, label: "1 = no mismatch" },
  };
  const svg = lineChartSvg(spec);
  assertWellFormed(svg);
  // grpo mean breaks at the NaN step into two segments; the faint seed and dr-mas are one each.
  assert.equal(count(svg, "polyline"), 4);
  assert.equal(svg.match(/×/g)?.length, 1, "one mark for the non-finite step");
  assert.match(svg, /stroke-dasharray="6 4"/);
  assert.match(svg, /grad &lt;norm&gt; &amp; spikes/);
  assert.match(svg, /stroke-opacity="0.35"/);
  // The legend names the two mean lines, not the faint seed.
  assert.match(svg, />grpo \(mean\)</);
  assert.doesNotMatch(svg, />grpo seed 0</);
  // Integer steps: no tick label between two steps.
  assert.doesNotMatch(svg, />0\.5</);
  assert.equal(lineChartSvg(spec), svg, "deterministic output");
  // A line's points are ordered left to right and the higher value is drawn higher.
  const dr = svg.match(/points="([^"]+)"[^>]*stroke="#D55E00"/)![1].split(" ")
    .map((p) => p.split(",").map(Number));
  assert.ok(dr[0][0] < dr[1][0]);
  assert.equal(dr[0][1], dr[1][1]);
});

Deno.test("line chart: bad input is a ChartInputError naming the chart", () => {
  assert.throws(
    () => lineChartSvg({ title: "empty", xLabel: "x", yLabel: "y", series: [] }),
    (e) => e instanceof ChartInputError && /chart "empty": series is empty/.test(e.message),
  );
  assert.throws(
    () =>
      lineChartSvg({
        title: "nan",
        xLabel: "x",
        yLabel: "y",
        series: [{ name: "s", colour: 0, points: [{ x: 0, y: NaN }] }],
      }),
    ChartInputError,
  );
});

Deno.test("bar chart: heights proportional to values, CI whiskers, n/a, legend", () => {
  const svg = barChartSvg({
    title: "accuracy",
    yLabel: "%",
    groups: [
      {
        label: "grpo",
        bars: [
          { series: "avg@16", value: 50, low: 40, high: 60 },
          { series: "pass@16", value: 25 },
        ],
      },
      {
        label: "dr-mas",
        bars: [{ series: "avg@16", value: NaN }, { series: "pass@16", value: 75 }],
      },
    ],
  });
  assertWellFormed(svg);
  // background + 3 bars + 2 legend swatches
  assert.equal(count(svg, "rect"), 6);
  const heights = attrs(svg, "rect", "height").slice(1, 4);
  assert.ok(Math.abs(heights[0] / heights[1] - 2) < 0.02, `50 vs 25: ${heights}`);
  assert.ok(Math.abs(heights[2] / heights[1] - 3) < 0.02, `75 vs 25: ${heights}`);
  assert.match(svg, />n\/a</);
  // One whisker (a vertical line and two caps) for the one bar with an interval.
  const whisker = [...svg.matchAll(/<line [^>]*stroke="#222222"/g)];
  assert.equal(whisker.length, 3);
  assert.match(svg, />avg@16</);
  assert.throws(() => barChartSvg({ title: "t", yLabel: "y", groups: [] }), ChartInputError);
  assert.throws(
    () => barChartSvg({ title: "t", yLabel: "y", groups: [{ label: "a", bars: [] }] }),
    ChartInputError,
  );
});

Deno.test("bar chart: long category labels are slanted, short ones not", () => {
  const groups = (label: string) =>
    Array.from({ length: 9 }, (_, i) => ({
      label: `${label}-${i}`,
      bars: [{ series: "s", value: i }],
    }));
  assert.match(
    barChartSvg({ title: "t", yLabel: "y", groups: groups("refine-drmas-hetero") }),
    /rotate\(-30/,
  );
  assert.doesNotMatch(barChartSvg({ title: "t", yLabel: "y", groups: groups("a") }), /rotate\(-30/);
});
