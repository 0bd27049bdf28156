/** Gradient checks for broadcasting binary ops (bound: RTOL = 1e-6, see grad-check.ts). */
import * as onnx from "../../adapters/onnx/mod.ts";
import { gradTests } from "./grad-check.ts";

const pairs = [
  { tag: "same shape", a: [2, 3], b: [2, 3] },
  { tag: "size-1 dims both ways", a: [3, 1, 4], b: [1, 2, 1] },
  { tag: "rank difference", a: [2, 3, 4], b: [4] },
  { tag: "scalar", a: [], b: [2, 3] },
];

gradTests(
  "binary",
  pairs.flatMap(({ tag, a, b }) => [
    {
      name: `Add ${tag}`,
      inputs: { a: { shape: a }, b: { shape: b } },
      build: (_g, x) => onnx.add(x.a, x.b),
    },
    {
      name: `Sub ${tag}`,
      inputs: { a: { shape: a }, b: { shape: b } },
      build: (_g, x) => onnx.sub(x.a, x.b),
    },
    {
      name: `Mul ${tag}`,
      inputs: { a: { shape: a }, b: { shape: b } },
      build: (_g, x) => onnx.mul(x.a, x.b),
    },
    {
      name: `Div ${tag}`,
      inputs: { a: { shape: a }, b: { shape: b, init: "positive" as const } },
      build: (_g, x) => onnx.div(x.a, x.b),
    },
    {
      name: `Pow ${tag}`,
      inputs: { a: { shape: a, init: "positive" as const }, b: { shape: b } },
      build: (_g, x) => onnx.pow(x.a, x.b),
    },
    {
      name: `Min ${tag}`,
      inputs: { a: { shape: a }, b: { shape: b } },
      build: (_g, x) => onnx.min(x.a, x.b),
    },
    {
      name: `Max ${tag}`,
      inputs: { a: { shape: a }, b: { shape: b } },
      build: (_g, x) => onnx.max(x.a, x.b),
    },
  ]),
);
