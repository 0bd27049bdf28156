/**
 * The global gradient norm's two summation orders (TrainStepConfig.gradNorm, runtime.fused_ops'
 * grad_norm): "stacked" sums one reduction per stacked row group instead of one per tensor. Both
 * give the norm of the same gradient to float32 rounding (held against the float64 norm), the
 * steps they clip agree to that rounding, and "stacked" saves three nodes per tensor beyond the
 * groups in each graph that computes the norm.
 */
import assert from "node:assert/strict";
import { trainStepConfig } from "../../adapters/model/graphs.ts";
import { loraSpec } from "../../adapters/model/lora.ts";
import { decoderSpec } from "../../adapters/model/parameters.ts";
import { Graph } from "../../adapters/onnx/ir.ts";
import { toOnnxModel } from "../../adapters/onnx/onnx-writer.ts";
import { type GradNormOrder, optimizerStep, rowGroups } from "../../adapters/onnx/optim/mod.ts";
import { type HostTensor, hostTensor, scalar } from "../../adapters/onnx/runtime/mod.ts";
import { buildTrainStep, type TrainStepKind } from "../../adapters/onnx/train-step/graph.ts";
import { fillNormal, randomStream } from "../../engine/random/mod.ts";
import { tinyModel } from "../model/helpers.ts";
import { withRuntime } from "./backends.ts";
import { optimizerInputs } from "./optimizer-inputs.ts";

// 40 tensors in three layouts, as LoRA's A and B matrices group: a tree of Concat nodes each.
const shapes: number[][] = Array.from(
  { length: 40 },
  (_, i) => i % 3 === 0 ? [2 + (i % 5), 4] : i % 3 === 1 ? [4, 6] : [1 + (i % 4), 9],
);
const size = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

/** The guarded step over `shapes` with the norm summed in `order`; outputs the norm and params. */
function stepModel(order: GradNormOrder): Uint8Array {
  const g = new Graph(`adamw-${order}`);
  const { slots, scalars } = optimizerInputs(g, shapes);
  const result = optimizerStep(slots, scalars, undefined, undefined, order);
  g.output(result.gradNorm, "grad_norm");
  result.slots.forEach((n, i) => g.output(n.param, `p${i}_next`));
  return toOnnxModel(g);
}

Deno.test("the stacked and the per-tensor gradient norm: the float64 norm to float32 rounding, and the clipped steps agree", async () => {
  const feeds: Record<string, HostTensor> = {
    step: scalar(3),
    lr: scalar(1e-2),
    wd: scalar(0.1),
    max_norm: scalar(1), // the norm is about 9: every gradient is clipped by it
  };
  let squares = 0;
  shapes.forEach((s, i) => {
    for (const name of ["p", "g", "m", "v"]) {
      const data = new Float32Array(size(s));
      fillNormal(randomStream({ seed: 7, purpose: `${name}${i}` }), data, { std: 0.5 });
      if (name === "v") data.forEach((x, k) => (data[k] = x * x));
      if (name === "g") data.forEach((x) => (squares += x * x));
      feeds[`${name}${i}`] = hostTensor("float32", s, data);
    }
  });
  const exact = Math.sqrt(squares);
  const [stacked, perTensor] = await withRuntime("cpu", async (rt) => {
    const outs = [];
    for (const order of ["stacked", "per-tensor"] as const) {
      const session = await rt.load(stepModel(order));
      outs.push((await session.run(feeds)).host);
      await session.release();
    }
    return outs;
  });
  for (const out of [stacked, perTensor]) {
    const norm = out.grad_norm.data[0] as number;
    assert.ok(Math.abs(norm - exact) < 1e-6 * exact, `${norm} vs ${exact}`);
  }
  shapes.forEach((_, i) => {
    const [a, b] = [stacked[`p${i}_next`].data, perTensor[`p${i}_next`].data];
    for (let k = 0; k < a.length; k++) {
      assert.ok(Math.abs((a[k] as number) - (b[k] as number)) < 1e-6, `p${i}[${k}]`);
    }
  });
});

Deno.test("grad_norm in fused_ops builds the stacked norm: three nodes per tensor beyond the groups fewer", async () => {
  const model = await tinyModel("Qwen2ForCausalLM");
  const lora = loraSpec({ rank: 2, alpha: 4, targetModules: ["q_proj", "v_proj", "down_proj"] });
  const plain = decoderSpec(model.config, lora);
  const stacked = decoderSpec(model.config, lora, { fused: ["grad_norm"] });
  assert.equal(trainStepConfig(plain).gradNorm, "per-tensor");
  assert.equal(trainStepConfig(stacked).gradNorm, "stacked");
  const config = trainStepConfig(plain);
  const tensors = (config.trainable as readonly string[]).length;
  const groups = rowGroups(
    config.params.filter((p) => (config.trainable as readonly string[]).includes(p.name)).map((
      p,
    ) => ({ dtype: p.dtype ?? "float32", shape: p.shape })),
  ).length;
  const nodes = (spec: typeof plain, kind: TrainStepKind) =>
    buildTrainStep(trainStepConfig(spec), kind).graph.nodes.length;
  for (const kind of ["fused", "accumulate", "apply"] as const) {
    // Per tensor: a Mul, a ReduceSum and an Add into the running sum; per group the same three.
    assert.equal(nodes(plain, kind) - nodes(stacked, kind), 3 * (tensors - groups), kind);
  }
  assert.equal(nodes(plain, "logprobs"), nodes(stacked, "logprobs"), "no norm, no change");
});
