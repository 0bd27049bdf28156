/**
 * The optimizer step stacks same-layout tensors into one buffer per group (row-groups.ts): the
 * stacks join and split at most MAX_FAN tensors per node and give every tensor back unchanged,
 * and the stacked step's outputs equal, bit for bit, those of AdamW applied tensor by tensor.
 */
import assert from "node:assert/strict";
import { Graph } from "../../adapters/onnx/ir.ts";
import { toOnnxModel } from "../../adapters/onnx/onnx-writer.ts";
import { add, mul, type Value } from "../../adapters/onnx/mod.ts";
import {
  adamwUpdate,
  clipScale,
  globalNorm,
  isFinite,
  MAX_FAN,
  optimizerStep,
  rowGroups,
  stackRows,
  unstackRows,
} from "../../adapters/onnx/optim/mod.ts";
import { type HostTensor, hostTensor, scalar } from "../../adapters/onnx/runtime/mod.ts";
import { fillNormal, randomStream } from "../../engine/random/mod.ts";
import { backends, testName, withRuntime } from "./backends.ts";
import { optimizerInputs } from "./optimizer-inputs.ts";

// 17 tensors of 3 columns (a tree of Concat nodes), two of [2, 5], one vector and one scalar.
const shapes: number[][] = [
  ...Array.from({ length: 17 }, (_, i) => [1 + (i % 3), 3]),
  [2, 5],
  [4],
  [2, 5],
  [],
];

const size = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

function randomFeeds(names: readonly string[], seed: number): Record<string, HostTensor> {
  const feeds: Record<string, HostTensor> = {};
  for (const name of names) {
    shapes.forEach((s, i) => {
      const data = new Float32Array(size(s));
      fillNormal(randomStream({ seed, purpose: `${name}${i}` }), data, { std: 0.5 });
      if (name === "v") data.forEach((x, k) => (data[k] = x * x)); // second moments are >= 0
      feeds[`${name}${i}`] = hostTensor("float32", s, data);
    });
  }
  return feeds;
}

Deno.test("tensors group by layout; stacks join and split at most MAX_FAN per node", async () => {
  const g = new Graph("stack");
  const xs = shapes.map((s, i) => g.input(`x${i}`, "float32", s));
  const groups = rowGroups(xs);
  assert.deepEqual(groups, [
    Array.from({ length: 17 }, (_, i) => i),
    [17, 19],
    [18],
    [20],
  ]);
  for (const group of groups) {
    const members = group.map((i) => xs[i]);
    unstackRows(stackRows(members), members).forEach((y, k) => g.output(y, `y${group[k]}`));
  }
  const concats = g.nodes.filter((n) => n.spec.type === "Concat");
  const splits = g.nodes.filter((n) => n.spec.type === "Split");
  // 17 tensors: 3 nodes of 7, 7 and 3 inputs, then one of 3; the pair of [2, 5]: one more.
  assert.equal(concats.length, 5);
  assert.equal(splits.length, 5);
  assert.ok(concats.every((n) => n.inputs.length <= MAX_FAN));
  assert.ok(splits.every((n) => n.outputs.length <= MAX_FAN));
  const feeds = randomFeeds(["x"], 1);
  const out = await withRuntime("cpu", async (rt) => {
    const session = await rt.load(toOnnxModel(g));
    const result = await session.run(feeds);
    await session.release();
    return result.host;
  });
  shapes.forEach((s, i) => {
    assert.deepEqual(out[`y${i}`].dims, s);
    assert.deepEqual([...out[`y${i}`].data], [...feeds[`x${i}`].data], `tensor ${i}`);
  });
});

/** The guarded step of optimizer-step.ts written tensor by tensor, with no stacking. */
function perTensorStep(
  slots: readonly { param: Value; grad: Value; m: Value; v: Value }[],
  s: { step: Value; lr: Value; weightDecay: Value; maxGradNorm: Value },
) {
  const norm = globalNorm(slots.map((x) => x.grad));
  const ok = isFinite(norm);
  const scale = clipScale(norm, s.maxGradNorm);
  const t = add(s.step, 1);
  return slots.map((x) =>
    adamwUpdate({ ...x, grad: mul(x.grad, scale) }, {
      t,
      lr: s.lr,
      weightDecay: s.weightDecay,
      apply: ok,
    })
  );
}

function stepModel(stacked: boolean): Uint8Array {
  const g = new Graph("adamw");
  const { slots, scalars } = optimizerInputs(g, shapes);
  const next = stacked ? optimizerStep(slots, scalars).slots : perTensorStep(slots, scalars);
  next.forEach((n, i) => {
    g.output(n.param, `p${i}_next`);
    g.output(n.m, `m${i}_next`);
    g.output(n.v, `v${i}_next`);
  });
  return toOnnxModel(g);
}

for (const { name, skip } of backends) {
  Deno.test({
    name: testName(
      `${name}: the stacked AdamW step equals AdamW tensor by tensor, bit for bit`,
      skip,
    ),
    ignore: skip !== null,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const feeds: Record<string, HostTensor> = {
        ...randomFeeds(["p", "g", "m", "v"], 2),
        step: scalar(3),
        lr: scalar(1e-2),
        wd: scalar(0.1),
        max_norm: scalar(1),
      };
      const [stacked, alone] = await withRuntime(name, async (rt) => {
        const outs = [];
        for (const model of [stepModel(true), stepModel(false)]) {
          const session = await rt.load(model);
          outs.push((await session.run(feeds)).host);
          await session.release();
        }
        return outs;
      });
      for (const key of Object.keys(alone)) {
        assert.deepEqual([...stacked[key].data], [...alone[key].data], key);
      }
      assert.notDeepEqual([...alone.p0_next.data], [...feeds.p0.data], "the step moved p0");
    },
  });
}
