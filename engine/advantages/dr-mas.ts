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
 * Dr. MAS: for each agent k, mu_k and sigma_k over k's actions in the group (a trajectory counted
 * once per action of k); k's action in trajectory i gets `(R_i - mu_k) / (sigma_k + eps)`.
 *
 * @example
 * ```ts
 * drMasAdvantages(group, { sigma: "unbiased", eps: 1e-6 }).agents; // per-agent mu_k, sigma_k, n_k
 * ```
 */
export function drMasAdvantages(
  trajectories: readonly GroupTrajectory[],
  options: EstimatorOptions = DEFAULT_ESTIMATOR_OPTIONS,
): GroupAdvantages {
  return estimateGroup(
    "dr-mas",
    trajectories,
    options,
    ({ reward, agent }) => normalizedAdvantage(reward, agent, options.eps),
  );
}
