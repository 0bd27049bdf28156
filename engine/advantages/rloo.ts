/** RLOO (Ahmadian et al. 2024): REINFORCE with a leave-one-out baseline. */
import { estimateGroup } from "./group.ts";
import {
  DEFAULT_ESTIMATOR_OPTIONS,
  type EstimatorOptions,
  type GroupAdvantages,
  type GroupTrajectory,
} from "./types.ts";

/**
 * RLOO: trajectory i's actions get `S_i - mean_{j != i} S_j` over the trajectories' scores
 * (equal to `(S_i - mean S) * n / (n - 1)`, the Dr. MAS code's form, `core_algos.py` lines
 * 713-716). The code takes the baseline from each trajectory's first action's score and the
 * numerator from each action's own; here both come from the trajectory score, as its GRPO path
 * does, so the estimate does not depend on action order. A group of one has no other sample to
 * compare with: advantage 0 (the code leaves the raw score). All-equal scores give exactly 0. Not
 * normalized, so the options only travel into the recorded result.
 *
 * @example
 * ```ts
 * rlooAdvantages(group); // scores [1, 0, 0]: advantages 1 - 0 = 1, 0 - 0.5, 0 - 0.5
 * ```
 */
export function rlooAdvantages(
  trajectories: readonly GroupTrajectory[],
  options: EstimatorOptions = DEFAULT_ESTIMATOR_OPTIONS,
): GroupAdvantages {
  const n = trajectories.length;
  return estimateGroup("rloo", "group", trajectories, options, {
    from: "trajectory-score",
    advantage: ({ value, scores, trajectory }) => {
      if (n === 1) return 0;
      if (scores.every((s) => s === scores[0])) return 0;
      let sum = 0;
      for (const s of scores) sum += s;
      const baseline = (sum - scores[trajectory]) / (n - 1);
      return value === baseline ? 0 : value - baseline;
    },
  });
}
