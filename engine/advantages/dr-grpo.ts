/** Dr. GRPO (Liu et al. 2025, "Understanding R1-Zero-Like Training"): GRPO without the std. */
import { estimateGroup } from "./group.ts";
import {
  DEFAULT_ESTIMATOR_OPTIONS,
  type EstimatorOptions,
  type GroupAdvantages,
  type GroupTrajectory,
} from "./types.ts";

/**
 * Dr. GRPO: `R - mu` with mu over the group's trajectories; dividing by sigma is what it removes
 * (it biases updates toward prompts that are too easy or too hard). The sigma convention only
 * matters for a group of one (code convention: mu = 0).
 *
 * @example
 * ```ts
 * drGrpoAdvantages(group).actions.map((a) => a.advantage); // R_i - mean(R)
 * ```
 */
export function drGrpoAdvantages(
  trajectories: readonly GroupTrajectory[],
  options: EstimatorOptions = DEFAULT_ESTIMATOR_OPTIONS,
): GroupAdvantages {
  return estimateGroup(
    "dr-grpo",
    trajectories,
    options,
    ({ reward, global }) => reward === global.mu ? 0 : reward - global.mu,
  );
}
