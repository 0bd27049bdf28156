/**
 * One guarded optimizer step on the graph: global gradient norm, non-finite guard, clipping by
 * global norm, AdamW. A step whose gradient norm is NaN or Inf leaves every parameter, moment and
 * the step counter unchanged and reports skipped = 1. Clipping and AdamW run once per group of
 * same-layout tensors stacked into one buffer (row-groups.ts), with the per-tensor results.
 */
import type { Value } from "../ir.ts";
import { add, mul, sub } from "../ops/binary.ts";
import { castTo } from "../ops/common.ts";
import { ADAM_DEFAULTS, type AdamConstants, type AdamSlot, adamwUpdate } from "./adamw.ts";
import { clipScale, globalNorm, type GradNormOrder } from "./clip-grad.ts";
import { isFinite } from "./finite.ts";
import { rowGroups, stackRows, unstackRows } from "./row-groups.ts";

/** Graph scalars the step reads (float, shape []). */
export interface OptimizerScalars {
  /** Updates applied so far (0 before the first); the bias-correction step is this plus 1. */
  readonly step: Value;
  readonly lr: Value;
  readonly weightDecay: Value;
  /** Clip threshold on the global norm; +Inf disables clipping. */
  readonly maxGradNorm: Value;
}

/** Updated parameter and moments of one slot. */
export interface UpdatedSlot {
  readonly param: Value;
  readonly m: Value;
  readonly v: Value;
}

/** What one guarded step produces. */
export interface OptimizerStepResult {
  /** Updated parameter and moments, in the order of the slots given. */
  readonly slots: readonly UpdatedSlot[];
  /** Global gradient norm before clipping. */
  readonly gradNorm: Value;
  /** 1 when the update was skipped for a non-finite gradient, else 0 (float scalar). */
  readonly skipped: Value;
  /** Updates applied after this step. */
  readonly stepNext: Value;
}

/**
 * Emits the guarded, clipped AdamW step for all trainable slots. `stackedGrads`, when given, are
 * the gradients of each group of `rowGroups` over the parameters already stacked (a gradient sum
 * kept stacked between runs), so they are not stacked again from the slots' gradients.
 * `normOrder` sums the global norm tensor by tensor (default) or over those stacks.
 *
 * @example
 * ```ts
 * import type { Graph, Value } from "../ir.ts";
 * import { optimizerStep } from "./optimizer-step.ts";
 *
 * declare const g: Graph;
 * declare const param: Value, grad: Value, m: Value, v: Value;
 * declare const step: Value, lr: Value, weightDecay: Value, maxGradNorm: Value;
 * const r = optimizerStep([{ param, grad, m, v }], { step, lr, weightDecay, maxGradNorm });
 * g.output(r.skipped, "skipped");
 * ```
 */
export function optimizerStep(
  slots: readonly AdamSlot[],
  scalars: OptimizerScalars,
  constants: AdamConstants = ADAM_DEFAULTS,
  stackedGrads?: readonly Value[],
  normOrder: GradNormOrder = "per-tensor",
): OptimizerStepResult {
  const groups = rowGroups(slots.map((s) => s.param));
  const gradStacks = groups.map((group, k) =>
    stackedGrads?.[k] ?? stackRows(group.map((i) => slots[i].grad))
  );
  const gradNorm = globalNorm(
    normOrder === "stacked" ? gradStacks : slots.map((s) => s.grad),
  );
  const ok = isFinite(gradNorm);
  const scale = clipScale(gradNorm, scalars.maxGradNorm);
  const applied = castTo(ok, scalars.step.dtype);
  const t = add(scalars.step, 1);
  const next: UpdatedSlot[] = new Array(slots.length);
  groups.forEach((group, k) => {
    const members = group.map((i) => slots[i]);
    const stacked = (pick: (s: AdamSlot) => Value) => stackRows(members.map(pick));
    const updated = adamwUpdate(
      {
        param: stacked((s) => s.param),
        grad: mul(gradStacks[k], scale),
        m: stacked((s) => s.m),
        v: stacked((s) => s.v),
      },
      { t, lr: scalars.lr, weightDecay: scalars.weightDecay, apply: ok },
      constants,
    );
    const params = unstackRows(updated.param, members.map((s) => s.param));
    const ms = unstackRows(updated.m, members.map((s) => s.m));
    const vs = unstackRows(updated.v, members.map((s) => s.v));
    group.forEach((slot, j) => (next[slot] = { param: params[j], m: ms[j], v: vs[j] }));
  });
  return {
    slots: next,
    gradNorm,
    skipped: sub(1, applied),
    stepNext: add(scalars.step, applied),
  };
}
