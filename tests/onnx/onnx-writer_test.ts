/**
 * The writer's models load and run in onnxruntime-node (CPU) and onnxruntime-web (WASM,
 * single-threaded), embedded and with external data, for every IR dtype.
 */
import assert from "node:assert/strict";
import * as ortNode from "onnxruntime-node";
import * as ortWeb from "onnxruntime-web/webgpu";
import * as onnx from "../../adapters/onnx/mod.ts";
import { policyGraph } from "./policy-graph.ts";

ortWeb.env.wasm.numThreads = 1;
ortWeb.env.logLevel = "error";

/** y = relu(x @ w + b) with a 64x64 weight (big enough to go external), plus dtype probes. */
function model(): onnx.Graph {
  const g = new onnx.Graph("writer");
  const x = g.input("x", "float32", ["batch", 64]);
  const w = g.initializer(
    "w",
    onnx.tensor(
      "float32",
      [64, 64],
      Float32Array.from({ length: 4096 }, (_, i) => ((i % 7) - 3) / 64),
    ),
  );
  const b = g.initializer("b", onnx.tensor("float32", [64], new Float32Array(64).fill(0.25)));
  g.output(onnx.relu(onnx.add(onnx.matMul(x, w), b)), "y");
  const ids = g.input("ids", "int32", ["batch"]);
  g.output(onnx.add(ids, onnx.scalar(g, 1, "int32")), "ids_plus_one");
  // float16 compute inside the graph: onnxruntime-node cannot take float16 tensors from Deno
  // (its binding reads a Float16Array as 0 bytes), so the probe casts at the boundary.
  const h = onnx.castTo(g.input("h", "float32", [2]), "float16");
  g.output(onnx.castTo(onnx.mul(h, onnx.scalar(g, 2, "float16")), "float32"), "h_twice");
  g.output(onnx.greater(onnx.castTo(ids, "float32"), onnx.scalar(g, 1, "float32")), "ids_gt_one");
  return g;
}

function expectedY(x: Float32Array, batch: number): number[] {
  const out: number[] = [];
  for (let r = 0; r < batch; r++) {
    for (let c = 0; c < 64; c++) {
      let s = 0.25;
      for (let k = 0; k < 64; k++) s += x[r * 64 + k] * (((k * 64 + c) % 7) - 3) / 64;
      out.push(Math.max(s, 0));
    }
  }
  return out;
}

type AnyOrt = typeof ortNode | typeof ortWeb;

function feeds(ort: AnyOrt) {
  const x = Float32Array.from({ length: 128 }, (_, i) => Math.sin(i));
  const h = new Float32Array([1.5, -0.25]);
  return {
    x,
    tensors: {
      x: new ort.Tensor("float32", x, [2, 64]),
      ids: new ort.Tensor("int32", new Int32Array([1, 5]), [2]),
      h: new ort.Tensor("float32", h, [2]),
    },
  };
}

async function checkRun(ort: AnyOrt, session: ortNode.InferenceSession | ortWeb.InferenceSession) {
  const { x, tensors } = feeds(ort);
  // deno-lint-ignore no-explicit-any
  const out = await (session as any).run(tensors);
  const y = [...out.y.data as Float32Array];
  expectedY(x, 2).forEach((e, i) =>
    assert.ok(Math.abs(y[i] - e) < 1e-5, `y[${i}] ${y[i]} vs ${e}`)
  );
  assert.deepEqual([...out.ids_plus_one.data as Int32Array], [2, 6]);
  assert.deepEqual([...out.h_twice.data as Float32Array], [3, -0.5]);
  assert.deepEqual([...out.ids_gt_one.data as Uint8Array].map(Boolean), [false, true]);
  assert.deepEqual(out.y.dims, [2, 64]);
}

Deno.test("writer: embedded model runs in onnxruntime-node", async () => {
  const bytes = onnx.toOnnxModel(model());
  await checkRun(ortNode, await ortNode.InferenceSession.create(bytes));
});

Deno.test("writer: embedded model runs in onnxruntime-web (wasm)", async () => {
  const bytes = onnx.toOnnxModel(model());
  await checkRun(
    ortWeb,
    await ortWeb.InferenceSession.create(bytes, { executionProviders: ["wasm"] }),
  );
});

Deno.test("writer: external data loads from a path in node and as bytes in web", async () => {
  const { model: bytes, data, location } = onnx.toOnnxModelWithExternalData(model(), {
    location: "writer.weights",
  });
  // The 16 KiB weight goes out, the 256 B bias stays in.
  assert.equal(data.byteLength, 64 * 64 * 4);
  assert.ok(bytes.byteLength < 4096, `model is ${bytes.byteLength} bytes`);
  const dir = await Deno.makeTempDir({ prefix: "polyrl-onnx-" });
  try {
    await Deno.writeFile(`${dir}/model.onnx`, bytes);
    await Deno.writeFile(`${dir}/${location}`, data);
    await checkRun(ortNode, await ortNode.InferenceSession.create(`${dir}/model.onnx`));
    const web = await ortWeb.InferenceSession.create(bytes, {
      executionProviders: ["wasm"],
      externalData: [{ path: location, data }],
    });
    await checkRun(ortWeb, web);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writer: declares opset 18, IR 8, and symbolic dims on inputs and outputs", async () => {
  const session = await ortNode.InferenceSession.create(onnx.toOnnxModel(model()));
  assert.equal(onnx.OPSET, 18);
  assert.equal(onnx.IR_VERSION, 8);
  assert.deepEqual(session.inputNames, ["x", "ids", "h"]);
  assert.deepEqual(session.outputNames, ["y", "ids_plus_one", "h_twice", "ids_gt_one"]);
  const meta = session.inputMetadata[0];
  assert.ok(meta.isTensor && meta.shape[0] === "batch" && meta.shape[1] === 64);
});

Deno.test("writer: a graph without outputs is rejected", () => {
  const g = new onnx.Graph("empty");
  g.input("x", "float32", [1]);
  assert.throws(() => onnx.toOnnxModel(g), /empty has no outputs/);
});

Deno.test("writer: the same graph (with gradients) built twice gives identical bytes", () => {
  const a = onnx.toOnnxModel(model());
  const b = onnx.toOnnxModel(model());
  assert.deepEqual(a, b);
  assert.deepEqual(onnx.toOnnxModel(policyGraph()), onnx.toOnnxModel(policyGraph()));
});

Deno.test("writer: an output that renames a computed value costs no Identity copy", async () => {
  const g = new onnx.Graph("renames");
  const x = g.input("x", "float32", [2]);
  const doubled = onnx.add(x, x);
  g.output(doubled, "doubled"); // folded: the Add writes "doubled" itself
  g.output(onnx.mul(doubled, x), "product"); // folded; its Mul still reads "doubled"
  g.output(x, "x_again"); // a graph input: ONNX needs the Identity
  const shared = onnx.sub(x, onnx.scalar(g, 1, "float32"));
  g.output(shared, "minus_one"); // published twice: both Identities stay
  g.output(shared, "minus_one_too");
  const bytes = onnx.toOnnxModel(g);
  // Each Identity node writes "Identity" twice (its op type and its name, Identity_<id>).
  const identities = new TextDecoder("latin1").decode(bytes).split("Identity").length - 1;
  assert.equal(identities, 2 * 3);
  const session = await ortNode.InferenceSession.create(bytes);
  assert.deepEqual(session.outputNames, [
    "doubled",
    "product",
    "x_again",
    "minus_one",
    "minus_one_too",
  ]);
  const out = await session.run({
    x: new ortNode.Tensor("float32", new Float32Array([1, 3]), [2]),
  });
  assert.deepEqual([...out.doubled.data as Float32Array], [2, 6]);
  assert.deepEqual([...out.product.data as Float32Array], [2, 18]);
  assert.deepEqual([...out.x_again.data as Float32Array], [1, 3]);
  assert.deepEqual([...out.minus_one.data as Float32Array], [0, 2]);
  assert.deepEqual([...out.minus_one_too.data as Float32Array], [0, 2]);
});
