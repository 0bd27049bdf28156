/**
 * The charts' pure parts: the page palette, the smoothing and log views, and the SQL console's
 * quick chart. What the browser draws from them is tests/web/charts-browser_test.ts.
 */
import assert from "node:assert/strict";
import { chartFromRows } from "../../web/components/chart-data.ts";
import { ema, shownSeries, SmoothingRangeError } from "../../web/components/chart-view.ts";
import { MARKER_COLORS, SeriesPalette } from "../../web/components/palette.ts";
import { MAX_QUICK_SERIES, quickChart } from "../../web/components/quick-chart.ts";

Deno.test("palette: colours by label, the same whatever order the charts list them in", () => {
  const a = new SeriesPalette(["solver", "critic", "global", "critic"]);
  const b = new SeriesPalette(["global", "critic", "solver"]);
  for (const label of ["critic", "global", "solver"]) assert.equal(a.color(label), b.color(label));
  const colours = ["critic", "global", "solver"].map((l) => a.color(l));
  assert.equal(new Set(colours).size, 3, `distinct colours: ${colours}`);
  // asked again, from any chart: unchanged
  assert.equal(a.color("solver"), colours[2]);
});

Deno.test("palette: the labels most charts draw (the agents) take the first colours", () => {
  // as the Run page lists them: reward; grad-wg; grad-agent; lemma; baseline mu and sigma
  const p = new SeriesPalette([
    ...["accuracy", "reward"],
    ...["wg-critic", "wg-solver"],
    ...["critic", "solver"],
    ...["critic", "solver"],
    ...["critic", "global", "solver"],
    ...["critic", "global", "solver"],
  ]);
  const first = new SeriesPalette(["a", "b"]);
  assert.deepEqual([p.color("critic"), p.color("solver")], [first.color("a"), first.color("b")]);
  assert.equal(p.color("global"), new SeriesPalette(["a", "b", "c"]).color("c"));
});

Deno.test("palette: a label first seen live takes a new colour and moves no other", () => {
  const p = new SeriesPalette(["critic", "solver"]);
  const before = [p.color("critic"), p.color("solver")];
  const verifier = p.color("verifier");
  assert.ok(!before.includes(verifier), `verifier ${verifier} reuses one of ${before}`);
  assert.deepEqual([p.color("critic"), p.color("solver")], before);
});

/** Hue in degrees and saturation of #rrggbb. */
function hueOf(hex: string): { hue: number; saturation: number } {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255);
  const max = Math.max(r, g, b), d = max - Math.min(r, g, b);
  if (d === 0) return { hue: 0, saturation: 0 };
  const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return { hue: (h * 60 + 360) % 360, saturation: d / max };
}

Deno.test("palette: no line has a marker's hue (red, orange), across many labels", () => {
  const markers = Object.values(MARKER_COLORS).map((c) => hueOf(c).hue);
  assert.deepEqual(markers.map(Math.round), [32, 0]);
  const p = new SeriesPalette(Array.from({ length: 30 }, (_, i) => `agent-${i}`));
  for (let i = 0; i < 30; i++) {
    const c = p.color(`agent-${i}`);
    const { hue, saturation } = hueOf(c);
    const near = markers.some((m) => Math.min(Math.abs(hue - m), 360 - Math.abs(hue - m)) < 20);
    assert.ok(!near || saturation < 0.25, `${c} (hue ${Math.round(hue)}) looks like a marker`);
  }
});

Deno.test("ema: TensorBoard's debiased average, gaps kept", () => {
  const s = ema([1, null, 3, 3], 0.5);
  assert.equal(s[0], 1); // debiased: the first value is itself, not half of it
  assert.equal(s[1], null);
  assert.ok(Math.abs(s[2]! - 1.75 / 0.75) < 1e-12, `${s[2]}`);
  assert.ok(Math.abs(s[3]! - 2.375 / 0.875) < 1e-12, `${s[3]}`);
  assert.deepEqual(ema([4, 1, 7], 0), [4, 1, 7]);
  // Heavily smoothed, a step up is approached slowly.
  const step = ema([0, 0, 0, 0, 1, 1], 0.9);
  assert.ok(step[4]! > 0 && step[4]! < 0.5, `${step[4]}`);
});

Deno.test("ema: a weight outside [0, 1) is refused by name", () => {
  for (const w of [1, -0.1, NaN, 2]) {
    assert.throws(
      () => ema([1, 2], w),
      (e) => e instanceof SmoothingRangeError && Object.is(e.weight, w),
    );
  }
});

Deno.test("views: smoothing moves lines, never markers or bars; log drops values <= 0", () => {
  const chart = chartFromRows("norms", "step", [
    { x: 0, label: "wg-a", value: 0, n: 1 },
    { x: 1, label: "wg-a", value: 10, n: 1 },
    { x: 2, label: "wg-a", value: 2, n: 1 },
  ], "gradient norm");
  chart.series.push(
    { label: "wg-a spike", y: [null, 10, null], n: [], marker: "spike" },
    { label: "wg-a non-finite", y: [null, null, 0], n: [], marker: "non-finite" },
  );
  const [line, spike, nonFinite] = shownSeries(chart, { smoothing: 0.5, logY: false });
  assert.deepEqual(line, ema([0, 10, 2], 0.5));
  assert.deepEqual(spike, [null, 10, null]);
  assert.deepEqual(nonFinite, [null, null, 0]);
  const log = shownSeries(chart, { smoothing: 0, logY: true });
  assert.deepEqual(log[0], [null, 10, 2]);
  // Drawn at 0 on a linear axis, a non-finite step sits on the lowest line value on a log one.
  assert.deepEqual(log[2], [null, null, 2]);
  const bars = { ...chart, categories: ["a", "b", "c"] };
  assert.deepEqual(shownSeries(bars, { smoothing: 0.9, logY: false })[0], [0, 10, 2]);
});

Deno.test("quick chart: one line per group column value, not the last row per step", () => {
  const { chart, note } = quickChart({
    columns: ["step", "agent", "grad_norm"],
    rows: [
      [0, "solver", 1.5],
      [0, "critic", 0.5],
      [1, "solver", 2.5],
      [1, "critic", 0.25],
      [2, "critic", 0.75],
    ],
  });
  assert.equal(note, undefined);
  assert.ok(chart);
  assert.equal(chart.xLabel, "step");
  assert.equal(chart.yLabel, "grad_norm");
  assert.deepEqual(chart.x, [0, 1, 2]);
  assert.deepEqual(chart.series.map((s) => [s.label, s.y]), [
    ["critic", [0.5, 0.25, 0.75]],
    ["solver", [1.5, 2.5, null]],
  ]);
});

Deno.test("quick chart: several group columns and y columns name their lines", () => {
  const { chart } = quickChart({
    columns: ["step", "run_id", "agent", "mu", "sigma"],
    rows: [
      [0, "r1", "solver", 0.5, 0.1],
      [0, "r1", null, 0.25, 0.2],
      [1, "r1", "solver", 0.75, 0.3],
    ],
  });
  assert.ok(chart);
  assert.equal(chart.yLabel, "mu, sigma");
  assert.deepEqual(chart.series.map((s) => s.label), [
    "r1 · NULL mu",
    "r1 · NULL sigma",
    "r1 · solver mu",
    "r1 · solver sigma",
  ]);
  assert.deepEqual(chart.series[2].y, [0.5, 0.75]);
});

Deno.test("quick chart: numeric columns without groups, bars for a text first column", () => {
  const plain = quickChart({ columns: ["step", "reward"], rows: [[0, 0.5], [1, null], [2, 1]] });
  assert.deepEqual(plain.chart?.series.map((s) => [s.label, s.y]), [["reward", [0.5, 1]]]);
  const bars = quickChart({
    columns: ["agent", "turns", "tokens"],
    rows: [["critic", 96, 12.5], ["solver", 96, 30]],
  });
  assert.deepEqual(bars.chart?.categories, ["critic", "solver"]);
  assert.equal(bars.chart?.xLabel, "agent");
  assert.deepEqual(bars.chart?.series.map((s) => s.label), ["tokens", "turns"]);
  // One row is a chart too: a point (drawn as a dot) or a bar.
  assert.deepEqual(quickChart({ columns: ["step", "r"], rows: [[3, 1]] }).chart?.x, [3]);
  assert.equal(
    quickChart({ columns: ["run_id"], rows: [["a"]] }).note,
    "no numeric column to draw",
  );
});

Deno.test("quick chart: NaN and infinities are not drawn, nor a row without x", () => {
  const { chart } = quickChart({
    columns: ["step", "agent", "v"],
    rows: [[0, "a", NaN], [1, "a", Infinity], [2, "a", 3], [NaN, "a", 4], [3, "a", -Infinity]],
  });
  assert.deepEqual(chart?.x, [2]);
  assert.deepEqual(chart?.series.map((s) => [s.label, s.y]), [["a", [3]]]);
});

Deno.test("quick chart: a group per row is refused with what to do", () => {
  const rows = Array.from({ length: MAX_QUICK_SERIES + 5 }, (_, i) => [0, `t-${i}`, i]);
  const { chart, note } = quickChart({ columns: ["step", "trajectory", "reward"], rows });
  assert.equal(chart, null);
  assert.match(note!, new RegExp(`${MAX_QUICK_SERIES + 5} lines \\(one per trajectory\\)`));
  assert.match(note!, /filter or aggregate/);
});
