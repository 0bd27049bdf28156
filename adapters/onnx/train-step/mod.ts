/**
 * Train steps for the clipped policy objective, the public entry point: configuration and IO
 * names, graph builders (fused, accumulate, apply), host batches, and the runner that keeps
 * parameters and Adam state on the device. Built on the graph compiler (adapters/onnx/mod.ts),
 * which knows nothing of train steps.
 *
 * @example
 * ```ts
 * import type { HostTensor, Runtime } from "../runtime/mod.ts";
 * import {
 *   openTrainStep,
 *   type ParamSpec,
 *   type PolicyBatch,
 *   type PolicyFn,
 *   type TrainStepHyper,
 * } from "./mod.ts";
 *
 * declare const runtime: Runtime;
 * declare const policy: PolicyFn;
 * declare const params: readonly ParamSpec[];
 * declare const initial: Record<string, HostTensor>;
 * declare const batch: PolicyBatch;
 * declare const hyper: TrainStepHyper;
 * const runner = await openTrainStep({ runtime, config: { policy, params }, initial });
 * const metrics = await runner.step(batch, hyper);
 * ```
 */
export {
  type DropoutMaskSpec,
  IO,
  type KlEstimator,
  logprobTemperature,
  LOSS_METRICS,
  type LossAggregation,
  type ParamSpec,
  type PolicyFn,
  type PolicyInputs,
  trainableNames,
  type TrainObjective,
  type TrainStepConfig,
  TrainStepError,
} from "./spec.ts";
export {
  type ObjectiveInputs,
  type ObjectiveOutputs,
  policyObjective,
  targetLogprobs,
  temperedLogSoftmax,
} from "./loss.ts";
export {
  buildTrainStep,
  type TrainStepConstants,
  type TrainStepGraph,
  type TrainStepKind,
} from "./graph.ts";
export {
  batchFeeds,
  checkBatch,
  countLossTokens,
  dropoutMaskFeeds,
  type DropoutMaskFill,
  lossDenominator,
  type PolicyBatch,
  splitBatch,
} from "./batch.ts";
export {
  openTrainStep,
  type PartedStepMetrics,
  type TrainStepHyper,
  type TrainStepMetrics,
  type TrainStepRunner,
  type TrainStepRunnerOptions,
} from "./runner.ts";
