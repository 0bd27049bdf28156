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
 * GRPO: mu, sigma over the group's trajectory scores (each trajectory once); every action of
 * trajectory i gets `(S_i - mu) / (sigma + eps)`, whichever agent took it, where S_i is the mean
 * of the trajectory's penalized action rewards. Numerator and statistics come from the same
 * values, so |A| <= sqrt(n - 1) under population sigma, and a sigma = 0 group gets 0.
 *
 * Follows `compute_grpo_outcome_advantage` with `group_by_agent_id=False` in the Dr. MAS code
 * (langfengQ/DrMAS 19c632b, `verl/trainer/ppo/core_algos.py` lines 541-566: `traj2avg` replaces
 * each action's score, `id2mean`/`id2std` are taken over those averages, a group of one gets
 * mu 0 and sigma 1 — our `unbiased` convention).
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
  return estimateGroup("grpo", "group", trajectories, options, {
    from: "trajectory-score",
    advantage: ({ value, global }) => normalizedAdvantage(value, global, options.eps),
  });
}
