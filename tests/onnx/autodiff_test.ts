/** Autodiff behaviour beyond single rules: accumulation, unconnected inputs, rule errors. */
import assert from "node:assert/strict";
import * as ort from "onnxruntime-node";
import * as onnx from "../../adapters/onnx/mod.ts";
import { checkGradients, gradTests } from "./grad-check.ts";

gradTests("autodiff", [
  {
    name: "a value feeding several consumers accumulates its gradient",
    inputs: { x: { shape: [2, 3] }, w: { shape: [3, 3] } },
    build: (_g, v) => {
      const h = onnx.tanh(onnx.matMul(v.x, v.w));
      // h is used three times, x twice, w twice (through h and directly).
      return onnx.add(onnx.mul(h, h), onnx.matMul(onnx.add(h, v.x), v.w));
    },
  },
  {
    name: "next-token log-prob with symbolic batch and seq, shifted targets and a loss mask",
    inputs: {
      ids: {
        shape: [2, 4],
        dims: ["batch", "seq"],
        dtype: "int32",
        init: [1, 3, 0, 2, 2, 2, 1, 0],
      },
      mask: { shape: [2, 3], dims: ["batch", "seq-1"], init: [1, 1, 0, 0, 1, 1] },
      emb: { shape: [4, 3] },
      w: { shape: [3, 4] },
    },
    build: (_g, v) => {
      const logits = onnx.matMul(onnx.tanh(onnx.gather(v.emb, v.ids)), v.w);
      const logp = onnx.logSoftmax(onnx.slice(logits, [0], [-1], [1]), -1); // [batch, seq-1, 4]
      const next = onnx.unsqueeze(onnx.slice(v.ids, [1], [onnx.SLICE_END], [1]), [2]);
      const picked = onnx.squeeze(onnx.gatherElements(logp, next, 2), [2]);
      const masked = onnx.mul(picked, v.mask);
      return onnx.div(onnx.reduceSum(masked), onnx.reduceSum(v.mask));
    },
  },
  {
    name: "two-layer MLP with symbolic batch, sigmoid-gated activation and mean loss",
    inputs: {
      x: { shape: [4, 3], dims: ["batch", 3] },
      w1: { shape: [3, 5] },
      b1: { shape: [5] },
      w2: { shape: [5, 2] },
    },
    build: (_g, v) => {
      const h = onnx.add(onnx.matMul(v.x, v.w1), v.b1);
      const act = onnx.mul(h, onnx.sigmoid(onnx.mul(h, 1.702)));
      const logits = onnx.matMul(act, v.w2);
      return onnx.reduceMean(onnx.logSoftmax(logits, -1), [0]);
    },
  },
]);

Deno.test("autodiff: an input the loss does not depend on gets zeros", async () => {
  const g = new onnx.Graph("zeros");
  const x = g.input("x", "float32", ["n"]);
  const unused = g.input("unused", "float32", [2, "n"]);
  const loss = onnx.reduceSum(onnx.mul(x, x));
  const [gx, gu] = onnx.gradients(g, loss, [x, unused]);
  g.output(gx, "gx");
  g.output(gu, "gu");
  const session = await ort.InferenceSession.create(onnx.toOnnxModel(g));
  const out = await session.run({
    x: new ort.Tensor("float32", new Float32Array([1, -2, 3]), [3]),
    unused: new ort.Tensor("float32", new Float32Array(6).fill(7), [2, 3]),
  });
  assert.deepEqual([...out.gx.data as Float32Array], [2, -4, 6]);
  assert.deepEqual(out.gu.dims, [2, 3]);
  assert.deepEqual([...out.gu.data as Float32Array], [0, 0, 0, 0, 0, 0]);
});

Deno.test("autodiff: the checker rejects a wrong rule", async () => {
  // An Exp whose rule forgets the factor exp(x): the finite differences must disagree.
  const badExp = onnx.defineOp(
    "Exp",
    (inputs) => [{ dtype: inputs[0]!.dtype, shape: inputs[0]!.shape }],
    ({ grads }) => [grads[0]],
  );
  await assert.rejects(
    checkGradients({
      name: "bad Exp",
      inputs: { x: { shape: [3] } },
      build: (_g, v) => onnx.apply(badExp, [v.x]),
    }),
    /bad Exp: d loss \/ d x\[0\]/,
  );
});

Deno.test("autodiff: an op without a rule is named in the error", () => {
  const g = new onnx.Graph("norule");
  const x = g.input("x", "float32", [2]);
  const opaque = onnx.defineOp(
    "Softplus",
    (inputs) => [{ dtype: "float32", shape: inputs[0]!.shape }],
  );
  const y = onnx.reduceSum(onnx.apply(opaque, [x]));
  assert.throws(() => onnx.gradients(g, y, [x]), /Softplus: has no gradient rule/);
});

Deno.test("autodiff: a seed weights a tensor loss", async () => {
  const g = new onnx.Graph("seed");
  const x = g.input("x", "float32", [3]);
  const seed = g.input("seed", "float32", [3]);
  const [gx] = onnx.gradients(g, onnx.mul(x, x), [x], { seed });
  g.output(gx, "gx");
  const session = await ort.InferenceSession.create(onnx.toOnnxModel(g));
  const out = await session.run({
    x: new ort.Tensor("float32", new Float32Array([1, 2, 3]), [3]),
    seed: new ort.Tensor("float32", new Float32Array([1, 0, -1]), [3]),
  });
  assert.deepEqual([...out.gx.data as Float32Array], [2, 0, -6]);
});

Deno.test("autodiff: tied maxima share the ReduceMax gradient (hand-computed)", async () => {
  const g = new onnx.Graph("ties");
  const x = g.input("x", "float32", [2, 3]);
  const [gx] = onnx.gradients(g, onnx.reduceSum(onnx.reduceMax(x, [1])), [x]);
  g.output(gx, "gx");
  g.output(onnx.reduceSum(x, [], true), "same"); // explicit empty axes: a no-op, not "all"
  const session = await ort.InferenceSession.create(onnx.toOnnxModel(g));
  const data = new Float32Array([1, 3, 3, 5, 2, 5]);
  const out = await session.run({ x: new ort.Tensor("float32", data, [2, 3]) });
  assert.deepEqual([...out.gx.data as Float32Array], [0, 0.5, 0.5, 0.5, 0, 0.5]);
  assert.deepEqual([...out.same.data as Float32Array], [...data]);
});

Deno.test("autodiff: gradients flow to initializers (hand-computed)", async () => {
  const g = new onnx.Graph("init");
  const x = g.input("x", "float32", ["batch", 2]);
  const w = g.initializer("w", onnx.tensor("float32", [2], new Float32Array([3, -1])));
  // loss = sum_b (x_b . w)^2 / 2, so dL/dw = sum_b (x_b . w) x_b
  const dot = onnx.reduceSum(onnx.mul(x, w), [1]);
  const [gw] = onnx.gradients(g, onnx.mul(onnx.reduceSum(onnx.mul(dot, dot)), 0.5), [w]);
  g.output(gw, "gw");
  const session = await ort.InferenceSession.create(onnx.toOnnxModel(g));
  const out = await session.run({
    x: new ort.Tensor("float32", new Float32Array([1, 2, 0, 1]), [2, 2]),
  });
  // dots: 1*3 + 2*-1 = 1, 0*3 + 1*-1 = -1; gw = 1*[1,2] + -1*[0,1] = [1, 1]
  assert.deepEqual([...out.gw.data as Float32Array], [1, 1]);
});
