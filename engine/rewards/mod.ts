/**
 * Rewards: the Kimi length reward, MADA-RL's generator and counterfactual critic signals, Dr. MAS
 * last-token placement with an invalid-action penalty, and weighted component sums.
 *
 * @example
 * ```ts
 * import { madaCriticAdvantages } from "../rewards/mod.ts";
 * madaCriticAdvantages([{ length: 40, correct: true, generatorAccuracy: 0 }]).advantages; // [2]
 * ```
 */
export { RewardInputError } from "./errors.ts";
export { kimiLengthRewards, type LengthRewards, type ScoredResponse } from "./kimi-length.ts";
export {
  type CriticResponse,
  generatorAccuracy,
  MADA_WEIGHTS,
  madaCriticAdvantages,
  type MadaCriticResult,
  madaGeneratorAdvantages,
  type MadaGeneratorResult,
  type MadaWeights,
} from "./mada.ts";
export { actionReward, type AgentOutput, type PlacedReward, placeRewards } from "./placement.ts";
export { weightedReward } from "./weighted.ts";
