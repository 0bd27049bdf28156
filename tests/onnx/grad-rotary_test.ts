/**
 * Gradient checks for the one-node rotary embedding. onnxruntime's RotaryEmbedding has no float64
 * kernel, so the case passes through float32 (as grad-unary's Erf): eps 1e-3, bound 1e-4.
 */
import type { Value } from "../../adapters/onnx/mod.ts";
import * as onnx from "../../adapters/onnx/mod.ts";
import type { GradCase } from "./grad-check.ts";
import { gradTests } from "./grad-check.ts";

const f32 = (x: Value) => onnx.castTo(x, "float32");
const f64 = (x: Value) => onnx.castTo(x, "float64");
const angles = Array.from({ length: 6 * 4 }, (_, i) => 0.3 * i - 2);

const cases: GradCase[] = [{
  name: "RotaryEmbedding, 6 tokens of 2 heads of 8 (float32)",
  inputs: {
    x: { shape: [1, 6, 16] },
    cos: { shape: [6, 4], init: angles.map(Math.cos), check: false },
    sin: { shape: [6, 4], init: angles.map(Math.sin), check: false },
  },
  build: (_g, x) => f64(onnx.rotaryEmbedding(f32(x.x), f32(x.cos), f32(x.sin), 2)),
  eps: 1e-3,
  rtol: 1e-4,
}];

gradTests("rotary", cases);
