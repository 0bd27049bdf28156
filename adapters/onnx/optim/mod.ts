/** Graph-level optimizers: AdamW, global-norm clipping, the non-finite guard, the guarded step. */
export { ADAM_DEFAULTS, type AdamConstants, type AdamSlot, adamwUpdate } from "./adamw.ts";
export { CLIP_EPS, clipByGlobalNorm, globalNorm } from "./clip-grad.ts";
export { isFinite } from "./finite.ts";
export {
  type OptimizerScalars,
  optimizerStep,
  type OptimizerStepResult,
} from "./optimizer-step.ts";
