/** Graph IR: shape and dtype inference, symbolic dims, and build errors that name op and shapes. */
import assert from "node:assert/strict";
import * as onnx from "../../adapters/onnx/mod.ts";
import { policyGraph } from "./policy-graph.ts";

function graph() {
  const g = new onnx.Graph("ir");
  return {
    g,
    a: g.input("a", "float32", ["batch", 3, 4]),
    b: g.input("b", "float32", [4, 5]),
    ids: g.input("ids", "int32", ["batch", "seq"]),
  };
}

Deno.test("ir: shapes are inferred through ops, symbolic dims included", () => {
  const { g, a, b, ids } = graph();
  assert.deepEqual(onnx.matMul(a, b).shape, ["batch", 3, 5]);
  assert.deepEqual(onnx.reshape(a, [-1, 4]).shape, ["batch*3", 4]);
  assert.deepEqual(onnx.reshape(onnx.reshape(a, [-1, 4]), ["batch", 12]).shape, ["batch", 12]);
  assert.deepEqual(onnx.reduceSum(a, [1], true).shape, ["batch", 1, 4]);
  assert.deepEqual(onnx.transpose(a).shape, [4, 3, "batch"]);
  assert.deepEqual(onnx.slice(ids, [1], [onnx.SLICE_END], [1]).shape, ["batch", "seq-1"]);
  assert.deepEqual(onnx.concat([a, a], 0).shape, ["batch+batch", 3, 4]);
  const emb = g.input("emb", "float32", [10, 8]);
  assert.deepEqual(onnx.gather(emb, ids).shape, ["batch", "seq", 8]);
  assert.deepEqual(onnx.greater(a, onnx.scalar(g, 0, "float32")).dtype, "bool");
  assert.deepEqual(onnx.castTo(ids, "float32").dtype, "float32");
  assert.deepEqual(onnx.split(a, 2, [1, 3]).map((v) => v.shape), [["batch", 3, 1], [
    "batch",
    3,
    3,
  ]]);
  assert.deepEqual(onnx.unsqueeze(b, [0, 3]).shape, [1, 4, 5, 1]);
});

Deno.test("ir: errors name the op and the input shapes", () => {
  const { g, a, b, ids } = graph();
  assert.throws(
    () => onnx.matMul(b, a),
    /^OnnxGraphError: MatMul: inner dims 5 and 3 differ \(inputs: \[4,5\], \[batch,3,4\]\)$/m,
  );
  assert.throws(
    () => onnx.add(a, b),
    /Add: dims 3 and 4 at output axis 1 do not broadcast \(inputs: \[batch,3,4\], \[4,5\]\)/,
  );
  assert.throws(
    () => onnx.add(a, onnx.castTo(b, "float64")),
    /Add: inputs must share one dtype, got float32, float64/,
  );
  assert.throws(
    () => onnx.exp(ids),
    /Exp: "ids" must be float, got int32 \(inputs: \[batch,seq\]\)/,
  );
  const other = g.input("c", "float32", ["time", 3, 4]);
  assert.throws(
    () => onnx.add(a, other),
    /Add: dims batch and time at output axis 0 do not broadcast/,
  );
  assert.throws(() => onnx.reshape(b, [3, 7]), /Reshape: target \[3,7\] has 21 elements, input 20/);
  assert.throws(() => onnx.squeeze(a, [1]), /Squeeze: axis 1 has dim 3, not 1/);
  assert.throws(() => onnx.reduceSum(a, [3]), /ReduceSum: axis 3 out of range/);
  assert.throws(() => onnx.gather(a, b), /Gather: "b" must be int32 or int64, got float32/);
  assert.throws(() => onnx.slice(a, [-1], [onnx.SLICE_END], [0]), /Slice: on symbolic axis 0/);
  assert.throws(() => g.input("a", "float32", [1]), /tensor name "a" is already used/);
  const h = new onnx.Graph("other");
  assert.throws(
    () => onnx.add(a, h.input("z", "float32", [1])),
    /value "z" belongs to graph other/,
  );
});

Deno.test("ir: tensor checks the element count and the array type", () => {
  assert.throws(
    () => onnx.tensor("float32", [2, 2], new Float32Array(3)),
    /\[2,2\] has 4 elements, data has 3/,
  );
  assert.throws(
    () => onnx.tensor("int32", [1], new Float32Array(1)),
    /int32 needs a Int32Array, got Float32Array/,
  );
});

Deno.test("ir: shared constants and shape tensors are built once", () => {
  const { g, a } = graph();
  const before = g.nodes.length;
  onnx.scalar(g, 2, "float32");
  onnx.scalar(g, 2, "float32");
  onnx.shapeOf(a);
  onnx.shapeOf(a);
  assert.equal(g.nodes.length - before, 2);
});

Deno.test("ir: gradient graphs avoid ops WebGPU runs on the CPU", () => {
  const g = policyGraph();
  const types = new Set(g.nodes.map((n) => n.spec.type));
  for (const banned of ["LogSoftmax", "OneHot", "ConstantOfShape"]) assert.ok(!types.has(banned));
  // int64 appears only as shape data (Shape, Concat of dims, Constant axes, ReduceProd of dims).
  const shapeOps = new Set(["Shape", "Concat", "Constant", "ReduceProd", "Mul"]);
  const int64 = g.nodes.filter((n) => n.outputs.some((o) => o.dtype === "int64"));
  assert.ok(int64.length > 0, "the graph computes shapes");
  for (const n of int64) assert.ok(shapeOps.has(n.spec.type), n.name);
});

Deno.test("ir: generated names step around names the user took", () => {
  const g = new onnx.Graph("names");
  const x = g.input("x", "float32", [2]);
  const next = g.nodes.length + g.inputs.length; // the id the next node's output would get
  g.input(`neg_${next + 1}`, "float32", [2]);
  const y = onnx.neg(x);
  assert.equal(y.name, `neg_${next + 1}_2`);
});
