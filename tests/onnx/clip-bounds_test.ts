/**
 * `clip` with bounds computed in the graph (the PPO ratio clip: 1 - eps from a fed eps) clamps
 * with Max and Min instead of ONNX Clip, whose bounds onnxruntime's WebGPU EP reads on the host
 * (a mid-run copy off the GPU). The two forms must agree bit for bit, forward and backward,
 * including at ties (x exactly on a bound, where Clip passes the gradient), on cpu and webgpu.
 */
import assert from "node:assert/strict";
import * as onnx from "../../adapters/onnx/mod.ts";
import { hostTensor, scalar } from "../../adapters/onnx/runtime/mod.ts";
import { backends, testName, withRuntime } from "../onnx-train/backends.ts";

const LOW = 0.75;
const HIGH = 1.25;
// Below, on, inside and above each bound; the ties are exact in float32.
const X = [0.5, 0.75, 0.7500001, 1, 1.2499999, 1.25, 1.5, -2, 3, 0.75, 1.25, 1.1];
const WEIGHTS = X.map((_, i) => 0.5 + i / 8);

/** y = clip(x, lo, hi), loss = sum(y * w), and dloss/dx; bounds constant or fed. */
function model(fed: boolean): { bytes: Uint8Array; types: string[] } {
  const g = new onnx.Graph(fed ? "clip-fed" : "clip-const");
  const x = g.input("x", "float32", [X.length]);
  const w = g.input("w", "float32", [X.length]);
  const low = g.input("low", "float32", []);
  const high = g.input("high", "float32", []);
  // Fed bounds reach clip as computed values, as PPO's do (sub/add of fed scalars).
  const y = fed
    ? onnx.clip(x, onnx.sub(onnx.add(low, 1), 1), onnx.sub(onnx.add(high, 1), 1))
    : onnx.clip(x, LOW, HIGH);
  const loss = onnx.reduceSum(onnx.mul(y, w));
  const [dx] = onnx.gradients(g, loss, [x]);
  g.output(y, "y");
  g.output(dx, "dx");
  return { bytes: onnx.toOnnxModel(g), types: g.nodes.map((n) => n.spec.type) };
}

Deno.test("clip with computed bounds emits Max and Min, not Clip", () => {
  assert.ok(model(false).types.includes("Clip"));
  const fed = model(true).types;
  assert.ok(!fed.includes("Clip"), `nodes: ${fed.join(", ")}`);
  assert.ok(fed.includes("Max") && fed.includes("Min"));
});

for (const { name, skip } of backends) {
  Deno.test({
    name: testName(`${name}: clip by computed bounds equals Clip bit for bit, ties included`, skip),
    ignore: skip !== null,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: () =>
      withRuntime(name, async (runtime) => {
        const feeds = {
          x: hostTensor("float32", [X.length], X),
          w: hostTensor("float32", [X.length], WEIGHTS),
          low: scalar(LOW),
          high: scalar(HIGH),
        };
        const results = [];
        for (const fed of [false, true]) {
          const session = await runtime.load(model(fed).bytes);
          results.push((await session.run(feeds)).host);
          await session.release();
        }
        const [clipOp, maxMin] = results;
        assert.deepEqual([...maxMin.y.data], [...clipOp.y.data]);
        assert.deepEqual([...maxMin.dx.data], [...clipOp.dx.data]);
        // Clip's rule: the gradient passes where LOW <= x <= HIGH, ties included.
        const inside = X.map((v, i) =>
          (Math.fround(v) >= LOW && Math.fround(v) <= HIGH ? 1 : 0) * WEIGHTS[i]
        );
        assert.deepEqual([...maxMin.dx.data], inside.map(Math.fround));
      }),
  });
}
