/**
 * AdamW on the graph (Loshchilov & Hutter, "Decoupled Weight Decay Regularization"), in the form
 * torch.optim.AdamW computes it:
 *   m' = b1 m + (1 - b1) g,  v' = b2 v + (1 - b2) g^2
 *   p' = p - lr (m' / (1 - b1^t) / (sqrt(v' / (1 - b2^t)) + eps) + wd p)
 * with t the 1-based step. `apply` (a bool scalar) selects the update or the old state, so an
 * update with a non-finite gradient is never applied.
 */
import type { Value } from "../ir.ts";
import { add, div, mul, pow, sub } from "../ops/binary.ts";
import { where } from "../ops/select.ts";
import { sqrt } from "../ops/unary.ts";

/** Build-time Adam constants (torch defaults). */
export interface AdamConstants {
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
}

/** Torch's AdamW defaults for beta1, beta2 and eps. */
export const ADAM_DEFAULTS: AdamConstants = Object.freeze({ beta1: 0.9, beta2: 0.999, eps: 1e-8 });

/** Per-step scalars of the update (graph values, so they change without rebuilding). */
export interface AdamStepInputs {
  /** 1-based step as a float scalar. */
  readonly t: Value;
  readonly lr: Value;
  readonly weightDecay: Value;
  /** Bool scalar: false keeps parameter and moments unchanged. */
  readonly apply: Value;
}

/** One parameter's state. */
export interface AdamSlot {
  readonly param: Value;
  readonly grad: Value;
  readonly m: Value;
  readonly v: Value;
}

/**
 * The updated parameter and moments of one slot.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { adamwUpdate } from "./adamw.ts";
 *
 * declare const w: Value, gw: Value, m: Value, v: Value; // parameter, gradient, moments
 * declare const t: Value, lr: Value, weightDecay: Value, ok: Value; // scalars
 * const next = adamwUpdate({ param: w, grad: gw, m, v }, { t, lr, weightDecay, apply: ok });
 * ```
 */
export function adamwUpdate(
  slot: AdamSlot,
  step: AdamStepInputs,
  c: AdamConstants = ADAM_DEFAULTS,
): { param: Value; m: Value; v: Value } {
  const { param, grad, m, v } = slot;
  const m2 = add(mul(m, c.beta1), mul(grad, 1 - c.beta1));
  const v2 = add(mul(v, c.beta2), mul(mul(grad, grad), 1 - c.beta2));
  const bc1 = sub(1, pow(c.beta1, step.t));
  const bc2 = sub(1, pow(c.beta2, step.t));
  const direction = div(div(m2, bc1), add(sqrt(div(v2, bc2)), c.eps));
  const p2 = sub(param, mul(step.lr, add(direction, mul(param, step.weightDecay))));
  return {
    param: where(step.apply, p2, param),
    m: where(step.apply, m2, m),
    v: where(step.apply, v2, v),
  };
}
