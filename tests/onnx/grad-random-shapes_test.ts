/**
 * Gradient checks on seeded random shapes: broadcasting pairs (rank 0 to 4, dims 1 to 4, with
 * dropped leading axes and size-1 axes on either side) for every broadcasting op, and random
 * batched MatMul shapes. Bound: RTOL = 1e-6 (see grad-check.ts).
 */
import * as onnx from "../../adapters/onnx/mod.ts";
import type { GradCase } from "./grad-check.ts";
import { gradTests, rng } from "./grad-check.ts";

const next = rng(20261202);
const pick = (n: number) => Math.floor(next() * n);

/** Two shapes that broadcast: a random full shape, each side drops leading axes or sets 1s. */
function broadcastPair(): [number[], number[]] {
  const full = Array.from({ length: 1 + pick(4) }, () => 1 + pick(4));
  const side = () => full.slice(pick(full.length + 1)).map((d) => (next() < 0.35 ? 1 : d));
  return [side(), side()];
}

const binary = [
  ["Add", onnx.add, "normal"],
  ["Sub", onnx.sub, "normal"],
  ["Mul", onnx.mul, "normal"],
  ["Div", onnx.div, "positive"],
  ["Pow", onnx.pow, "positive"],
  ["Min", onnx.min, "normal"],
  ["Max", onnx.max, "normal"],
] as const;

const cases: GradCase[] = [];
for (let i = 0; i < 6; i++) {
  const [a, b] = broadcastPair();
  for (const [name, op, init] of binary) {
    cases.push({
      name: `#${i} ${name} [${a}] x [${b}]`,
      inputs: { a: { shape: a, init }, b: { shape: b, init } },
      build: (_g, x) => op(x.a, x.b),
      seed: i,
    });
  }
  cases.push({
    name: `#${i} Where [${a}] x [${b}] with a computed mask`,
    inputs: { a: { shape: a }, b: { shape: b } },
    build: (_g, x) => onnx.where(onnx.greater(x.a, x.b), onnx.exp(x.a), onnx.mul(x.b, x.b)),
    seed: i,
  });
}

for (let i = 0; i < 4; i++) {
  const [batchA, batchB] = broadcastPair();
  const [m, k, n] = [1 + pick(3), 1 + pick(3), 1 + pick(3)];
  cases.push({
    name: `#${i} MatMul [${[...batchA, m, k]}] x [${[...batchB, k, n]}]`,
    inputs: { a: { shape: [...batchA, m, k] }, b: { shape: [...batchB, k, n] } },
    build: (_g, x) => onnx.matMul(x.a, x.b),
    seed: i,
  });
}

gradTests("random shapes", cases);
