/** Gradient checks for shape ops (bound: RTOL = 1e-6, see grad-check.ts). */
import * as onnx from "../../adapters/onnx/mod.ts";
import { gradTests } from "./grad-check.ts";

gradTests("shape", [
  {
    name: "Reshape with -1",
    inputs: { x: { shape: [2, 3, 4] } },
    build: (_g, x) => onnx.reshape(x.x, [6, -1]),
  },
  {
    name: "Reshape merging symbolic dims and splitting them back",
    inputs: { x: { shape: [2, 3, 4], dims: ["batch", "seq", 4] } },
    build: (_g, x) => {
      const flat = onnx.reshape(x.x, [-1, 4]); // [batch*seq, 4]
      return onnx.reshape(onnx.mul(flat, flat), ["batch", "seq", 2, 2]);
    },
  },
  {
    name: "Reshape to an explicit product dim no value carries yet",
    inputs: { x: { shape: [2, 3, 4], dims: ["batch", "seq", 4] } },
    build: (_g, x) => onnx.transpose(onnx.reshape(x.x, ["seq*batch", 4])),
  },
  {
    name: "Transpose",
    inputs: { x: { shape: [2, 3, 4] } },
    build: (_g, x) => onnx.transpose(x.x, [2, 0, 1]),
  },
  {
    name: "Concat of three along axis 1",
    inputs: { a: { shape: [2, 1] }, b: { shape: [2, 3] }, c: { shape: [2, 2] } },
    build: (_g, x) => onnx.concat([x.a, x.b, x.c], 1),
  },
  {
    name: "Concat along a symbolic axis",
    inputs: { a: { shape: [2, 3], dims: ["n", 3] }, b: { shape: [3, 3], dims: ["m", 3] } },
    build: (_g, x) => onnx.concat([x.a, x.b], 0),
  },
  {
    name: "Slice static, negative bounds",
    inputs: { x: { shape: [4, 5] } },
    build: (_g, x) => onnx.slice(x.x, [1, -4], [3, -1], [0, 1]),
  },
  {
    name: "Slice a symbolic axis (shifted positions)",
    inputs: { x: { shape: [2, 5, 3], dims: ["batch", "seq", 3] } },
    build: (_g, x) => {
      const head = onnx.slice(x.x, [0], [-1], [1]); // seq-1
      const tail = onnx.slice(x.x, [1], [onnx.SLICE_END], [1]); // seq-1
      return onnx.mul(head, tail);
    },
  },
  {
    name: "Split with one unused output",
    inputs: { x: { shape: [2, 6] } },
    build: (_g, x) => {
      const [a, , c] = onnx.split(x.x, 1, [1, 2, 3]);
      return [a, onnx.mul(c, c)];
    },
  },
  {
    name: "Split a symbolic-free axis of a symbolic tensor",
    inputs: { x: { shape: [3, 4], dims: ["batch", 4] } },
    build: (_g, x) => onnx.split(x.x, 1, [2, 2]),
  },
  {
    name: "Squeeze and Unsqueeze",
    inputs: { x: { shape: [2, 1, 3] } },
    build: (_g, x) => onnx.unsqueeze(onnx.squeeze(onnx.exp(x.x), [1]), [0, 3]),
  },
  {
    name: "Expand both ways",
    inputs: { x: { shape: [3, 1] } },
    build: (_g, x) => onnx.expand(x.x, [2, 3, 4]),
  },
  {
    name: "Expand to a symbolic shape",
    inputs: { x: { shape: [4] }, y: { shape: [3, 4], dims: ["batch", 4] } },
    build: (_g, x) => onnx.mul(onnx.expand(x.x, ["batch", 4]), x.y),
  },
]);
