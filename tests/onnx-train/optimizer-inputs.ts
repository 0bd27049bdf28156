/**
 * The inputs of a guarded optimizer step over tensors of the given shapes, as the optimizer tests
 * feed them: `p<i>`, `g<i>`, `m<i>`, `v<i>` per tensor and the scalars `step`, `lr`, `wd`,
 * `max_norm`.
 */
import type { Graph, Value } from "../../adapters/onnx/mod.ts";

/** One tensor's parameter, gradient and moments. */
export interface OptimizerSlotInputs {
  readonly param: Value;
  readonly grad: Value;
  readonly m: Value;
  readonly v: Value;
}

/**
 * Declares the step's inputs on `g`.
 *
 * @example
 * ```ts
 * import { Graph } from "../../adapters/onnx/mod.ts";
 * import { optimizerStep } from "../../adapters/onnx/optim/mod.ts";
 * import { optimizerInputs } from "./optimizer-inputs.ts";
 *
 * const g = new Graph("adamw");
 * const { slots, scalars } = optimizerInputs(g, [[2, 3], [4]]);
 * const result = optimizerStep(slots, scalars);
 * ```
 */
export function optimizerInputs(g: Graph, shapes: readonly (readonly number[])[]) {
  const slots: OptimizerSlotInputs[] = shapes.map((s, i) => ({
    param: g.input(`p${i}`, "float32", s),
    grad: g.input(`g${i}`, "float32", s),
    m: g.input(`m${i}`, "float32", s),
    v: g.input(`v${i}`, "float32", s),
  }));
  const scalars = {
    step: g.input("step", "float32", []),
    lr: g.input("lr", "float32", []),
    weightDecay: g.input("wd", "float32", []),
    maxGradNorm: g.input("max_norm", "float32", []),
  };
  return { slots, scalars };
}
