/** Dr. MAS agent-wise normalization (Feng et al. 2026, Sec. 4.2). */
import { estimateGroup } from "./group.ts";
import { normalizedAdvantage } from "./statistics.ts";
import {
  DEFAULT_ESTIMATOR_OPTIONS,
  type EstimatorOptions,
  type GroupAdvantages,
  type GroupTrajectory,
} from "./types.ts";

/**
 * Dr. MAS: for each agent k, mu_k and sigma_k over k's action rewards in the group (a trajectory
 * counted once per action of k); k's action gets `(r - mu_k) / (sigma_k + eps)` with r its own
 * (penalized) reward. The Dr. MAS code's `group_by_agent_id=True` (`ray_trainer.py`
 * compute_advantage groups by `uid_agent_id`; `core_algos.py` line 543 extends the group with
 * every action's score).
 *
 * @example
 * ```ts
 * import { drMasAdvantages, type GroupTrajectory } from "./mod.ts";
 * declare const group: readonly GroupTrajectory[];
 * drMasAdvantages(group, { sigma: "unbiased", eps: 1e-6 }).agents; // per-agent mu_k, sigma_k, n_k
 * ```
 */
export function drMasAdvantages(
  trajectories: readonly GroupTrajectory[],
  options: EstimatorOptions = DEFAULT_ESTIMATOR_OPTIONS,
): GroupAdvantages {
  return estimateGroup("dr-mas", "group", trajectories, options, {
    from: "action-reward",
    advantage: ({ value, agent }) => normalizedAdvantage(value, agent, options.eps),
  });
}
