/** Global-norm gradient clipping on the graph (the rule of torch.nn.utils.clip_grad_norm_). */
import type { Value } from "../ir.ts";
import { add, div, min, mul } from "../ops/binary.ts";
import { reduceSum } from "../ops/reduce.ts";
import { sqrt } from "../ops/unary.ts";

/** Added to the norm before dividing, as torch does, so a zero gradient divides safely. */
export const CLIP_EPS = 1e-6;

/**
 * The order the global gradient norm sums in: "per-tensor", tensor by tensor in parameter order
 * (every run recorded before the choice existed), or "stacked", one reduction per stacked row group
 * (optimizer-step.ts): far fewer nodes, another order, so the norm, the clip and every update
 * after it move in the low bits.
 */
export type GradNormOrder = "per-tensor" | "stacked";

/**
 * sqrt(sum over all tensors of sum(g^2)): a float scalar, summed tensor by tensor in the order
 * given (pass the stacks for the "stacked" order).
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { globalNorm } from "./clip-grad.ts";
 *
 * declare const gradW: Value, gradB: Value;
 * const norm = globalNorm([gradW, gradB]);
 * ```
 */
export function globalNorm(grads: readonly Value[]): Value {
  const squares = grads.map((g) => reduceSum(mul(g, g)));
  return sqrt(squares.reduce((total, s) => add(total, s)));
}

/**
 * The factor every gradient is scaled by: min(1, maxNorm / (norm + 1e-6)); maxNorm = +Inf
 * disables clipping.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { mul } from "../ops/binary.ts";
 * import { clipScale } from "./clip-grad.ts";
 *
 * declare const grad: Value, norm: Value, maxGradNorm: Value;
 * const clipped = mul(grad, clipScale(norm, maxGradNorm));
 * ```
 */
export function clipScale(norm: Value, maxNorm: Value): Value {
  return min(div(maxNorm, add(norm, CLIP_EPS)), 1);
}
