/** Dr. GRPO (Liu et al. 2025, "Understanding R1-Zero-Like Training"): GRPO without the std. */
import { estimateGroup } from "./group.ts";
import {
  DEFAULT_ESTIMATOR_OPTIONS,
  type EstimatorOptions,
  type GroupAdvantages,
  type GroupTrajectory,
} from "./types.ts";

/**
 * Dr. GRPO: `S_i - mu` with mu over the group's trajectory scores, as GRPO but without dividing
 * by sigma (it biases updates toward prompts that are too easy or too hard). The Dr. MAS code's
 * `norm_adv_by_std_in_grpo=False` branch (`core_algos.py` line 566). The sigma convention only
 * matters for a group of one (code convention: mu = 0). Its loss side is the constant
 * normalizer, `loss.aggregation: "seq-sum-const"`.
 *
 * @example
 * ```ts
 * import { drGrpoAdvantages, type GroupTrajectory } from "./mod.ts";
 * declare const group: readonly GroupTrajectory[];
 * drGrpoAdvantages(group).actions.map((a) => a.advantage); // S_i - mean(S)
 * ```
 */
export function drGrpoAdvantages(
  trajectories: readonly GroupTrajectory[],
  options: EstimatorOptions = DEFAULT_ESTIMATOR_OPTIONS,
): GroupAdvantages {
  return estimateGroup("dr-grpo", "group", trajectories, options, {
    from: "trajectory-score",
    advantage: ({ value, global }) => value === global.mu ? 0 : value - global.mu,
  });
}
