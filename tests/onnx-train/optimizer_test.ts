import assert from "node:assert/strict";
import { Graph } from "../../adapters/onnx/ir.ts";
import { toOnnxModel } from "../../adapters/onnx/onnx-writer.ts";
import { optimizerStep } from "../../adapters/onnx/optim/mod.ts";
import {
  type BackendName,
  type HostTensor,
  hostTensor,
  scalar,
} from "../../adapters/onnx/runtime/mod.ts";
import { backends, testName, withRuntime } from "./backends.ts";
import { adamwStep, clipScale, globalNorm } from "./reference.ts";

// Two parameter tensors of shapes [2, 3] and [3].
const shapes = [[2, 3], [3]] as const;

function optimizerModel(): Uint8Array {
  const g = new Graph("adamw-test");
  const f = (name: string, shape: readonly number[]) => g.input(name, "float32", shape);
  const slots = shapes.map((s, i) => ({
    param: f(`p${i}`, s),
    grad: f(`g${i}`, s),
    m: f(`m${i}`, s),
    v: f(`v${i}`, s),
  }));
  const r = optimizerStep(slots, {
    step: f("step", []),
    lr: f("lr", []),
    weightDecay: f("wd", []),
    maxGradNorm: f("max_norm", []),
  });
  r.slots.forEach((s, i) => {
    g.output(s.param, `p${i}_next`);
    g.output(s.m, `m${i}_next`);
    g.output(s.v, `v${i}_next`);
  });
  g.output(r.gradNorm, "grad_norm");
  g.output(r.skipped, "skipped");
  g.output(r.stepNext, "step_next");
  return toOnnxModel(g);
}

interface Case {
  p: number[][];
  g: number[][];
  m: number[][];
  v: number[][];
  step: number;
  lr: number;
  wd: number;
  maxNorm: number;
}

async function runCase(backend: BackendName, c: Case) {
  return await withRuntime(backend, async (rt) => {
    const session = await rt.load(optimizerModel());
    const feeds: Record<string, HostTensor> = {
      step: scalar(c.step),
      lr: scalar(c.lr),
      wd: scalar(c.wd),
      max_norm: scalar(c.maxNorm),
    };
    shapes.forEach((s, i) => {
      for (const k of ["p", "g", "m", "v"] as const) {
        feeds[`${k}${i}`] = hostTensor("float32", s, Float32Array.from(c[k][i]));
      }
    });
    const out = (await session.run(feeds)).host;
    await session.release();
    return out;
  });
}

function reference(c: Case) {
  const f32 = (xs: number[][]) => xs.map((x) => [...Float32Array.from(x)]);
  const [p, g, m, v] = [f32(c.p), f32(c.g), f32(c.m), f32(c.v)];
  const norm = globalNorm(g);
  const scale = clipScale(norm, c.maxNorm);
  const h = { lr: c.lr, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: c.wd };
  const next = p.map((_, i) =>
    adamwStep(p[i], g[i].map((x) => x * scale), m[i], v[i], c.step + 1, h)
  );
  return { next, norm };
}

function assertClose(actual: ArrayLike<number>, expected: readonly number[], what: string) {
  for (let i = 0; i < expected.length; i++) {
    const tol = 2e-6 * Math.max(1, Math.abs(expected[i]));
    assert.ok(
      Math.abs(actual[i] - expected[i]) <= tol,
      `${what}[${i}]: got ${actual[i]}, expected ${expected[i]} (tolerance ${tol})`,
    );
  }
}

const warm: Case = {
  p: [[1, -2, 0.5, 0, 3, -0.25], [0.1, 0.2, -0.3]],
  g: [[0.3, -0.1, 0.05, 0.2, -0.4, 0.01], [1.5, -0.7, 0.2]],
  m: [[0.01, 0.02, -0.03, 0, 0.05, 0.01], [0.1, -0.1, 0]],
  v: [[1e-4, 2e-4, 3e-4, 0, 5e-4, 1e-5], [0.01, 0.02, 0.001]],
  step: 4,
  lr: 1e-2,
  wd: 0.1,
  maxNorm: 1,
};

Deno.test("AdamW first step matches the hand-computed update p - lr (sign(g) + wd p)", async () => {
  // At t = 1 with zero moments the bias-corrected direction is g / (|g| + eps) = sign(g).
  const c: Case = {
    p: [[1, -2, 0.5, 0, 3, -0.25], [0.1, 0.2, -0.3]],
    g: [[0.5, -0.25, 0.125, 0.5, -0.5, 0.25], [0.5, -0.5, 0.25]],
    m: [[0, 0, 0, 0, 0, 0], [0, 0, 0]],
    v: [[0, 0, 0, 0, 0, 0], [0, 0, 0]],
    step: 0,
    lr: 0.1,
    wd: 0.01,
    maxNorm: Infinity,
  };
  const out = await runCase("cpu", c);
  const hand = [[0.899, -1.898, 0.3995, -0.1, 3.097, -0.34975], [-0.0001, 0.2998, -0.3997]];
  for (const i of [0, 1]) assertClose(out[`p${i}_next`].data, hand[i], `p${i}`);
  assert.equal(out.skipped.data[0], 0);
  assert.equal(out.step_next.data[0], 1);
});

for (const { name, skip } of backends) {
  Deno.test({
    name: testName(`${name}: clipped AdamW step matches the float64 reference`, skip),
    ignore: skip !== null,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const out = await runCase(name, warm);
      const ref = reference(warm);
      assert.ok(ref.norm > warm.maxNorm, "the case must exercise clipping");
      assertClose(out.grad_norm.data, [ref.norm], "grad_norm");
      ref.next.forEach((n, i) => {
        assertClose(out[`p${i}_next`].data, n.param, `p${i}`);
        assertClose(out[`m${i}_next`].data, n.m, `m${i}`);
        assertClose(out[`v${i}_next`].data, n.v, `v${i}`);
      });
      assert.equal(out.skipped.data[0], 0);
      assert.equal(out.step_next.data[0], 5);
    },
  });

  Deno.test({
    name: testName(`${name}: a NaN or Inf gradient skips the update and reports it`, skip),
    ignore: skip !== null,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      for (const bad of [NaN, Infinity, -Infinity]) {
        const c = { ...warm, g: [warm.g[0], [1.5, bad, 0.2]] };
        const out = await runCase(name, c);
        assert.equal(out.skipped.data[0], 1, `skipped for ${bad}`);
        assert.equal(out.step_next.data[0], warm.step, "step counter unchanged");
        shapes.forEach((_, i) => {
          for (const k of ["p", "m", "v"] as const) {
            assert.deepEqual(
              [...out[`${k}${i}_next`].data],
              [...Float32Array.from(warm[k][i])],
              `${k}${i} unchanged for ${bad}`,
            );
          }
        });
      }
    },
  });
}
