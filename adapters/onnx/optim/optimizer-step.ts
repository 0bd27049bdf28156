/**
 * One guarded optimizer step on the graph: global gradient norm, non-finite guard, clipping by
 * global norm, AdamW. A step whose gradient norm is NaN or Inf leaves every parameter, moment and
 * the step counter unchanged and reports skipped = 1.
 */
import { add, castTo, sub, type Value } from "../mod.ts";
import { ADAM_DEFAULTS, type AdamConstants, type AdamSlot, adamwUpdate } from "./adamw.ts";
import { clipByGlobalNorm, globalNorm } from "./clip-grad.ts";
import { isFinite } from "./finite.ts";

/** Graph scalars the step reads (float, shape []). */
export interface OptimizerScalars {
  /** Updates applied so far (0 before the first); the bias-correction step is this plus 1. */
  readonly step: Value;
  readonly lr: Value;
  readonly weightDecay: Value;
  /** Clip threshold on the global norm; +Inf disables clipping. */
  readonly maxGradNorm: Value;
}

/** What one guarded step produces. */
export interface OptimizerStepResult {
  /** Updated parameter and moments, in the order of the slots given. */
  readonly slots: readonly { readonly param: Value; readonly m: Value; readonly v: Value }[];
  /** Global gradient norm before clipping. */
  readonly gradNorm: Value;
  /** 1 when the update was skipped for a non-finite gradient, else 0 (float scalar). */
  readonly skipped: Value;
  /** Updates applied after this step. */
  readonly stepNext: Value;
}

/**
 * Emits the guarded, clipped AdamW step for all trainable slots.
 *
 * @example
 * const r = optimizerStep([{ param, grad, m, v }], { step, lr, weightDecay, maxGradNorm });
 * g.output(r.skipped, "skipped");
 */
export function optimizerStep(
  slots: readonly AdamSlot[],
  scalars: OptimizerScalars,
  constants: AdamConstants = ADAM_DEFAULTS,
): OptimizerStepResult {
  const gradNorm = globalNorm(slots.map((s) => s.grad));
  const ok = isFinite(gradNorm);
  const clipped = clipByGlobalNorm(slots.map((s) => s.grad), gradNorm, scalars.maxGradNorm);
  const applied = castTo(ok, scalars.step.dtype);
  const t = add(scalars.step, 1);
  const next = slots.map((s, i) =>
    adamwUpdate({ ...s, grad: clipped[i] }, {
      t,
      lr: scalars.lr,
      weightDecay: scalars.weightDecay,
      apply: ok,
    }, constants)
  );
  return {
    slots: next,
    gradNorm,
    skipped: sub(1, applied),
    stepNext: add(scalars.step, applied),
  };
}
