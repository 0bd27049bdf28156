/** GRPO's global baseline (Shao et al. 2024), as the Dr. MAS paper's comparison point. */
import { estimateGroup } from "./group.ts";
import { normalizedAdvantage } from "./statistics.ts";
import {
  DEFAULT_ESTIMATOR_OPTIONS,
  type EstimatorOptions,
  type GroupAdvantages,
  type GroupTrajectory,
} from "./types.ts";

/**
 * GRPO: mu, sigma over the group's trajectories (each once); every action of trajectory i gets
 * `(R_i - mu) / (sigma + eps)`, whichever agent took it.
 *
 * @example
 * ```ts
 * grpoAdvantages([
 *   { sample: 0, reward: 1, actions: [{ agent: "solver", turn: 0 }] },
 *   { sample: 1, reward: 0, actions: [{ agent: "solver", turn: 0 }] },
 * ]).actions.map((a) => a.advantage); // [~1, ~-1]
 * ```
 */
export function grpoAdvantages(
  trajectories: readonly GroupTrajectory[],
  options: EstimatorOptions = DEFAULT_ESTIMATOR_OPTIONS,
): GroupAdvantages {
  return estimateGroup(
    "grpo",
    trajectories,
    options,
    ({ reward, global }) => normalizedAdvantage(reward, global, options.eps),
  );
}
