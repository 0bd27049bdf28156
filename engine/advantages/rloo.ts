/** RLOO (Ahmadian et al. 2024): REINFORCE with a leave-one-out baseline. */
import { estimateGroup } from "./group.ts";
import {
  DEFAULT_ESTIMATOR_OPTIONS,
  type EstimatorOptions,
  type GroupAdvantages,
  type GroupTrajectory,
} from "./types.ts";

/**
 * RLOO: trajectory i's actions get `r - mean_{j != i} R_j`. A group of one has no other sample to
 * compare with, so its advantage is 0; a group whose rewards are all equal gets exactly 0 (the
 * baseline is that reward, not a rounded sum). Not normalized, so the options only travel into
 * the recorded result.
 *
 * @example
 * ```ts
 * rlooAdvantages(group); // rewards [1, 0, 0]: advantages 1 - 0 = 1, 0 - 0.5, 0 - 0.5
 * ```
 */
export function rlooAdvantages(
  trajectories: readonly GroupTrajectory[],
  options: EstimatorOptions = DEFAULT_ESTIMATOR_OPTIONS,
): GroupAdvantages {
  const rewards = trajectories.map((t) => t.reward);
  const n = rewards.length;
  let sum = 0;
  for (const r of rewards) sum += r;
  const allEqual = rewards.every((r) => r === rewards[0]);
  const baseline = (i: number) => allEqual ? rewards[0] : (sum - rewards[i]) / (n - 1);
  return estimateGroup("rloo", trajectories, options, ({ reward, trajectory }) => {
    if (n === 1) return 0;
    const b = baseline(trajectory);
    return reward === b ? 0 : reward - b;
  });
}
