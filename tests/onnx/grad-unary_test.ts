/** Gradient checks for elementwise unary ops and Cast (bound: RTOL = 1e-6, see grad-check.ts). */
import * as onnx from "../../adapters/onnx/mod.ts";
import type { Value } from "../../adapters/onnx/mod.ts";
import type { GradCase } from "./grad-check.ts";
import { gradTests } from "./grad-check.ts";

const ops: [string, (x: Value) => Value, "normal" | "positive"][] = [
  ["Neg", onnx.neg, "normal"],
  ["Exp", onnx.exp, "normal"],
  ["Log", onnx.log, "positive"],
  ["Sqrt", onnx.sqrt, "positive"],
  ["Sigmoid", onnx.sigmoid, "normal"],
  ["Tanh", onnx.tanh, "normal"],
  ["Relu", onnx.relu, "normal"],
  ["Abs", onnx.abs, "normal"],
  ["Reciprocal", onnx.reciprocal, "positive"],
  ["Identity", onnx.identity, "normal"],
];

const cases: GradCase[] = ops.flatMap(([name, op, init]) => [
  { name: `${name} [2,3]`, inputs: { x: { shape: [2, 3], init } }, build: (_g, x) => op(x.x) },
  { name: `${name} scalar`, inputs: { x: { shape: [], init } }, build: (_g, x) => op(x.x) },
]);

// onnxruntime CPU has no float64 Erf kernel, so Erf and a float32 round trip through Cast are
// checked in float32: eps 1e-3 keeps round-off (6e-8 / 1e-3) and truncation (~1e-6) under 1e-4.
const float32 = { eps: 1e-3, rtol: 1e-4 };
const f32 = (x: Value) => onnx.castTo(x, "float32");
const f64 = (x: Value) => onnx.castTo(x, "float64");
cases.push({
  name: "Erf [2,3] (float32)",
  inputs: { x: { shape: [2, 3] } },
  build: (_g, x) => f64(onnx.erf(f32(x.x))),
  ...float32,
});
cases.push({
  name: "Cast float64 -> float32 -> float64 passes gradients",
  inputs: { x: { shape: [3] } },
  build: (_g, x) => f64(onnx.mul(f32(x.x), onnx.tanh(f32(x.x)))),
  ...float32,
});

gradTests("unary", cases);
