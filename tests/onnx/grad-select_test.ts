/** Gradient checks for Where and Clip (bound: RTOL = 1e-6, see grad-check.ts). */
import * as onnx from "../../adapters/onnx/mod.ts";
import { gradTests } from "./grad-check.ts";

gradTests("select", [
  {
    name: "Where with broadcast condition and branches",
    inputs: {
      c: { shape: [3, 1], dtype: "bool", init: [1, 0, 1] },
      a: { shape: [3, 4] },
      b: { shape: [4] },
    },
    build: (_g, x) => onnx.where(x.c, x.a, x.b),
  },
  {
    name: "Where with a computed mask and a scalar branch",
    inputs: { a: { shape: [2, 3] } },
    build: (_g, x) => onnx.where(onnx.greater(x.a, 0), onnx.mul(x.a, x.a), 0),
  },
  {
    name: "Clip both bounds",
    inputs: { x: { shape: [3, 4] } },
    build: (_g, x) => onnx.clip(x.x, -0.5, 0.5),
  },
  {
    name: "Clip lower bound only",
    inputs: { x: { shape: [5] } },
    build: (_g, x) => onnx.clip(x.x, 0.1),
  },
  {
    name: "PPO-style min of ratio and clipped ratio",
    inputs: { r: { shape: [6], init: "positive" }, adv: { shape: [6] } },
    build: (_g, x) => onnx.min(onnx.mul(x.r, x.adv), onnx.mul(onnx.clip(x.r, 0.8, 1.2), x.adv)),
  },
]);
