/** Global-norm gradient clipping on the graph (the rule of torch.nn.utils.clip_grad_norm_). */
import type { Value } from "../ir.ts";
import { add, div, min, mul } from "../ops/binary.ts";
import { reduceSum } from "../ops/reduce.ts";
import { sqrt } from "../ops/unary.ts";

/** Added to the norm before dividing, as torch does, so a zero gradient divides safely. */
export const CLIP_EPS = 1e-6;

/**
 * sqrt(sum over all tensors of sum(g^2)): a float scalar. Summed tensor by tensor, in order, even
 * where the tensors are also stacked (optimizer-step.ts): one reduction over a stack would add in
 * another order, and the norm, the clip and every update after it would move in the low bits.
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
