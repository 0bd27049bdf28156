/** Global-norm gradient clipping on the graph (the rule of torch.nn.utils.clip_grad_norm_). */
import { add, div, min, mul, reduceSum, sqrt, type Value } from "../mod.ts";

/** Added to the norm before dividing, as torch does, so a zero gradient divides safely. */
export const CLIP_EPS = 1e-6;

/**
 * sqrt(sum over all tensors of sum(g^2)): a float scalar.
 *
 * @example const norm = globalNorm([gradW, gradB]);
 */
export function globalNorm(grads: readonly Value[]): Value {
  const squares = grads.map((g) => reduceSum(mul(g, g)));
  return sqrt(squares.reduce((total, s) => add(total, s)));
}

/**
 * Scales every gradient by min(1, maxNorm / (norm + 1e-6)); maxNorm = +Inf disables clipping.
 *
 * @example const clipped = clipByGlobalNorm(grads, norm, maxGradNorm);
 */
export function clipByGlobalNorm(grads: readonly Value[], norm: Value, maxNorm: Value): Value[] {
  const scale = min(div(maxNorm, add(norm, CLIP_EPS)), 1);
  return grads.map((g) => mul(g, scale));
}
