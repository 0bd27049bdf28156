/** Gradient checks for the one-node RMS normalization (bound: RTOL = 1e-6, see grad-check.ts). */
import * as onnx from "../../adapters/onnx/mod.ts";
import type { GradCase } from "./grad-check.ts";
import { gradTests } from "./grad-check.ts";

const cases: GradCase[] = [
  {
    name: "SimplifiedLayerNormalization over the last axis",
    inputs: { x: { shape: [2, 3, 4] }, scale: { shape: [4] } },
    build: (_g, x) => onnx.rmsNormalization(x.x, x.scale, 1e-6),
  },
  {
    name: "SimplifiedLayerNormalization over a symbolic batch, a large eps",
    inputs: { x: { shape: [3, 5], dims: ["batch", 5] }, scale: { shape: [5], init: "positive" } },
    build: (_g, x) => onnx.rmsNormalization(x.x, x.scale, 0.5),
  },
  {
    name: "SimplifiedLayerNormalization, scale not differentiated",
    inputs: { x: { shape: [2, 6] }, scale: { shape: [6], check: false } },
    build: (_g, x) => onnx.rmsNormalization(x.x, x.scale, 1e-5),
  },
];

gradTests("norm", cases);
