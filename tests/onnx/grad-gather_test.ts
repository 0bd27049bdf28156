/** Gradient checks for Gather, GatherElements and ScatterElements (bound: RTOL = 1e-6). */
import * as onnx from "../../adapters/onnx/mod.ts";
import { gradTests } from "./grad-check.ts";

gradTests("gather", [
  {
    name: "Gather embedding rows with repeated ids",
    inputs: {
      emb: { shape: [5, 3] },
      ids: { shape: [2, 3], dtype: "int32", init: [0, 4, 4, 2, 0, 0] },
    },
    build: (_g, x) => onnx.gather(x.emb, x.ids, 0),
  },
  {
    name: "Gather along axis 1 with negative index",
    inputs: { x: { shape: [2, 4, 3] }, idx: { shape: [2], dtype: "int32", init: [-1, 1] } },
    build: (_g, x) => onnx.gather(x.x, x.idx, 1),
  },
  {
    name: "Gather a scalar index",
    inputs: { x: { shape: [4, 2] }, idx: { shape: [], dtype: "int32", init: [2] } },
    build: (_g, x) => onnx.gather(x.x, x.idx, 0),
  },
  {
    name: "Gather with a symbolic batch of ids",
    inputs: {
      emb: { shape: [4, 2] },
      ids: { shape: [3, 2], dims: ["batch", "seq"], dtype: "int32", init: [1, 1, 3, 0, 1, 2] },
    },
    build: (_g, x) => onnx.gather(x.emb, x.ids, 0),
  },
  {
    name: "GatherElements token log-prob pick",
    inputs: {
      logits: { shape: [2, 3, 5] },
      targets: { shape: [2, 3, 1], dtype: "int32", init: [4, 0, 2, 2, 2, 1] },
    },
    build: (_g, x) => onnx.gatherElements(onnx.logSoftmax(x.logits, -1), x.targets, 2),
  },
  {
    name: "ScatterElements add into data and from updates",
    inputs: {
      data: { shape: [3, 2] },
      idx: { shape: [2, 2], dtype: "int32", init: [2, 0, 2, 1] },
      upd: { shape: [2, 2] },
    },
    build: (_g, x) => onnx.scatterElements(x.data, x.idx, onnx.mul(x.upd, x.upd), 0, "add"),
  },
]);
