/**
 * Group-baseline advantage estimators (DESIGN.md "Estimator details that decide results"): GRPO's
 * global baseline, Dr. MAS's agent-wise baseline, Dr. GRPO, RLOO and REINFORCE++-baseline, each
 * reporting the statistics it used and the Lemma 4.2 multiplier per agent, for the advantages
 * event.
 *
 * @example
 * ```ts
 * import { drMasAdvantages } from "../advantages/mod.ts";
 * const result = drMasAdvantages(group, { sigma: "population", eps: 1e-6 });
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
  type GroupAdvantages,
  type GroupTrajectory,
  type SigmaConvention,
} from "./types.ts";
export { baselineStatistics, checkEstimatorOptions, normalizedAdvantage } from "./statistics.ts";
export { lemmaMultiplier } from "./group.ts";
export { grpoAdvantages } from "./grpo.ts";
export { drMasAdvantages } from "./dr-mas.ts";
export { drGrpoAdvantages } from "./dr-grpo.ts";
export { rlooAdvantages } from "./rloo.ts";
export { reinforcePlusPlusAdvantages } from "./reinforce-pp.ts";
export { type BatchEstimatorName, estimateBatch, GROUP_ESTIMATORS } from "./estimators.ts";
