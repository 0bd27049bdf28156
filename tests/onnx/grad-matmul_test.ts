/** Gradient checks for MatMul and Gemm (bound: RTOL = 1e-6, see grad-check.ts). */
import * as onnx from "../../adapters/onnx/mod.ts";
import type { GradCase } from "./grad-check.ts";
import { gradTests } from "./grad-check.ts";

const matmuls: [string, number[], number[]][] = [
  ["2-D", [3, 4], [4, 2]],
  ["batched", [2, 3, 4], [2, 4, 5]],
  ["broadcast batch (size-1 and rank difference)", [2, 1, 3, 4], [3, 4, 2]],
  ["matrix x shared weight", [2, 3, 4], [4, 2]],
  ["vector x matrix", [4], [2, 4, 3]],
  ["matrix x vector", [2, 3, 4], [4]],
  ["vector x vector", [4], [4]],
];

const cases: GradCase[] = matmuls.map(([tag, a, b]) => ({
  name: `MatMul ${tag}`,
  inputs: { a: { shape: a }, b: { shape: b } },
  build: (_g, x) => onnx.matMul(x.a, x.b),
}));

cases.push({
  name: "MatMul with a symbolic batch dim",
  inputs: { a: { shape: [2, 3, 4], dims: ["batch", "seq", 4] }, b: { shape: [4, 3] } },
  build: (_g, x) => onnx.matMul(x.a, x.b),
});

for (const transA of [false, true]) {
  for (const transB of [false, true]) {
    cases.push({
      name: `Gemm transA=${transA} transB=${transB} alpha beta, C broadcast [N]`,
      inputs: {
        a: { shape: transA ? [4, 3] : [3, 4] },
        b: { shape: transB ? [2, 4] : [4, 2] },
        c: { shape: [2] },
      },
      build: (_g, x) => onnx.gemm(x.a, x.b, x.c, { transA, transB, alpha: 0.7, beta: 1.3 }),
    });
  }
}
cases.push(
  {
    name: "Gemm with C [M,1]",
    inputs: { a: { shape: [3, 4] }, b: { shape: [4, 2] }, c: { shape: [3, 1] } },
    build: (_g, x) => onnx.gemm(x.a, x.b, x.c),
  },
  {
    name: "Gemm with scalar C",
    inputs: { a: { shape: [3, 4] }, b: { shape: [4, 2] }, c: { shape: [] } },
    build: (_g, x) => onnx.gemm(x.a, x.b, x.c, { beta: 0.5 }),
  },
  {
    name: "Gemm without C",
    inputs: { a: { shape: [3, 4] }, b: { shape: [4, 2] } },
    build: (_g, x) => onnx.gemm(x.a, x.b),
  },
);

gradTests("matmul", cases);
