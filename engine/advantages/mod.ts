/**
 * Advantage estimators, all listed in `registry.ts`: GRPO's global baseline, Dr. MAS's agent-wise
 * baseline, Dr. GRPO, RLOO, REINFORCE++-baseline (batch scope) and MADA-RL (role scope), each
 * reporting the statistics it used and the Lemma 4.2 multiplier per agent, for the advantages
 * event; and the README's estimator table, generated from the registry.
 *
 * @example
 * ```ts
 * import { estimateStep, type GroupTrajectory } from "../advantages/mod.ts";
 * declare const group0: readonly GroupTrajectory[];
 * declare const group1: readonly GroupTrajectory[];
 * const perPrompt = estimateStep("dr-mas", [group0, group1], { sigma: "population", eps: 1e-6 });
 * ```
 */
export { AdvantageInputError } from "./errors.ts";
export {
  type ActionAdvantage,
  type ActionRef,
  type AgentStatistics,
  type BaselineStatistics,
  DEFAULT_ESTIMATOR_OPTIONS,
  type EstimatorOptions,
  type EstimatorScope,
  type GroupAdvantages,
  type GroupTrajectory,
  type RewardScheme,
  type SigmaConvention,
} from "./types.ts";
export { baselineStatistics, checkEstimatorOptions, normalizedAdvantage } from "./statistics.ts";
export { lemmaMultiplier, trajectoryScore } from "./group.ts";
export { grpoAdvantages } from "./grpo.ts";
export { drMasAdvantages } from "./dr-mas.ts";
export { drGrpoAdvantages } from "./dr-grpo.ts";
export { rlooAdvantages, rlooTrajectoryAdvantages } from "./rloo.ts";
export {
  reinforcePlusPlusAdvantages,
  reinforcePlusPlusTrajectoryAdvantages,
} from "./reinforce-pp.ts";
export { madaAdvantages } from "./mada.ts";
export {
  DEFAULT_ESTIMATOR,
  estimateStep,
  ESTIMATOR_NAMES,
  ESTIMATOR_REGISTRY,
  type EstimatorEntry,
  estimatorEntry,
  type EstimatorName,
  type StepEstimator,
} from "./registry.ts";
export {
  ESTIMATOR_TABLE_BEGIN,
  ESTIMATOR_TABLE_END,
  estimatorTable,
  EstimatorTableMarkersError,
  withEstimatorTable,
} from "./estimator-table.ts";
