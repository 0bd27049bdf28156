/** Gradient checks for reductions and softmax (bound: RTOL = 1e-6, see grad-check.ts). */
import * as onnx from "../../adapters/onnx/mod.ts";
import type { GradCase } from "./grad-check.ts";
import { gradTests } from "./grad-check.ts";

const reductions = [
  ["ReduceSum", onnx.reduceSum],
  ["ReduceMean", onnx.reduceMean],
  ["ReduceMax", onnx.reduceMax],
  ["ReduceLogSumExp", onnx.reduceLogSumExp],
] as const;

const axesCases: { tag: string; axes?: number[]; keep: boolean }[] = [
  { tag: "all axes", keep: false },
  { tag: "axis -1 keepdims", axes: [-1], keep: true },
  { tag: "axes [0,2]", axes: [0, 2], keep: false },
];

const cases: GradCase[] = reductions.flatMap(([name, op]) =>
  axesCases.map(({ tag, axes, keep }) => ({
    name: `${name} ${tag}`,
    inputs: { x: { shape: [2, 3, 4] } },
    build: (_g, x) => op(x.x, axes, keep),
  }))
);

cases.push(
  {
    name: "ReduceMean over a symbolic batch axis",
    inputs: { x: { shape: [3, 2], dims: ["batch", 2] } },
    build: (_g, x) => onnx.reduceMean(x.x, [0]),
  },
  {
    name: "Softmax axis -1",
    inputs: { x: { shape: [2, 5] } },
    build: (_g, x) => onnx.softmax(x.x, -1),
  },
  {
    name: "Softmax axis 0 of rank 3",
    inputs: { x: { shape: [3, 2, 2] } },
    build: (_g, x) => onnx.softmax(x.x, 0),
  },
  {
    name: "log-softmax as x - ReduceLogSumExp(x)",
    inputs: { x: { shape: [2, 3, 5] } },
    build: (_g, x) => onnx.logSoftmax(x.x, -1),
  },
  {
    name: "log-softmax with large logits stays finite",
    inputs: { x: { shape: [2, 4], init: [300, 301, 299, 302, -400, -401, -399, -402] } },
    build: (_g, x) => onnx.logSoftmax(x.x, -1),
  },
);

gradTests("reduce", cases);
