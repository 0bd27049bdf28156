/** RLOO (Ahmadian et al. 2024): REINFORCE with a leave-one-out baseline. */
import { firstActionBaseline } from "./first-action-baseline.ts";
import { estimateGroup } from "./group.ts";
import {
  DEFAULT_ESTIMATOR_OPTIONS,
  type EstimatorOptions,
  type GroupAdvantages,
  type GroupTrajectory,
} from "./types.ts";

/**
 * RLOO as the Dr. MAS code computes it (`compute_rloo_outcome_advantage`, `core_algos.py` lines
 * 680-721 at langfengQ/DrMAS 19c632b): each action's OWN score r (its trajectory's reward minus
 * its invalid-action penalty) against the mean m of the trajectories' first-action scores,
 * `r * n / (n - 1) - m * n / (n - 1)` (line 719), n the group's trajectories. Without invalid
 * actions this is `S_i - mean_{j != i} S_j`. A group of one keeps its raw score, as the code.
 * An action whose score equals m gets exactly 0. Not normalized, so the options only travel into
 * the recorded result.
 *
 * @example
 * ```ts
 * import { type GroupTrajectory, rlooAdvantages } from "./mod.ts";
 * declare const group: readonly GroupTrajectory[];
 * rlooAdvantages(group); // scores [1, 0, 0]: advantages 1 - 0 = 1, 0 - 0.5, 0 - 0.5
 * ```
 */
export function rlooAdvantages(
  trajectories: readonly GroupTrajectory[],
  options: EstimatorOptions = DEFAULT_ESTIMATOR_OPTIONS,
): GroupAdvantages {
  const baseline = firstActionBaseline(trajectories);
  const n = baseline.scores.length;
  return estimateGroup("rloo", "group", trajectories, options, {
    from: "action-reward",
    advantage: ({ value }) => {
      if (n <= 1) return value;
      if (value === baseline.mean) return 0;
      return value * n / (n - 1) - baseline.mean * n / (n - 1);
    },
  });
}

/**
 * `rloo-trajectory`: trajectory i's actions all get `S_i - mean_{j != i} S_j` over the
 * trajectories' scores S (the mean of each trajectory's action rewards), so the estimate does not
 * depend on action order and a penalized action shares its trajectory's advantage. Equal to
 * `rloo` without invalid actions. A group of one gets 0; all-equal scores give exactly 0. This
 * was `rloo` before the code's form became the default.
 *
 * @example
 * ```ts
 * import { type GroupTrajectory, rlooTrajectoryAdvantages } from "./mod.ts";
 * declare const group: readonly GroupTrajectory[];
 * rlooTrajectoryAdvantages(group); // scores [1, 0, 0]: advantages 1, -0.5, -0.5
 * ```
 */
export function rlooTrajectoryAdvantages(
  trajectories: readonly GroupTrajectory[],
  options: EstimatorOptions = DEFAULT_ESTIMATOR_OPTIONS,
): GroupAdvantages {
  const n = trajectories.length;
  return estimateGroup("rloo-trajectory", "group", trajectories, options, {
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
