/** Graph-level optimizers: AdamW, global-norm clipping, the non-finite guard, the guarded step. */
export { ADAM_DEFAULTS, type AdamConstants, type AdamSlot, adamwUpdate } from "./adamw.ts";
export { CLIP_EPS, clipScale, globalNorm, type GradNormOrder } from "./clip-grad.ts";
export { isFinite } from "./finite.ts";
export {
  type OptimizerScalars,
  optimizerStep,
  type OptimizerStepResult,
  type UpdatedSlot,
} from "./optimizer-step.ts";
export { MAX_FAN, rowGroups, stackRows, unstackRows } from "./row-groups.ts";
