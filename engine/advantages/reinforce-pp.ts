/** REINFORCE++ with baseline (Hu 2025): group-mean baseline, then batch-wide normalization. */
import { estimateGroup } from "./group.ts";
import { baselineStatistics, normalizedAdvantage } from "./statistics.ts";
import {
  DEFAULT_ESTIMATOR_OPTIONS,
  type EstimatorOptions,
  type GroupAdvantages,
  type GroupTrajectory,
} from "./types.ts";
import { AdvantageInputError } from "./errors.ts";

/**
 * REINFORCE++-baseline over a batch of groups: each action first gets `r - mu_group` (mu over its
 * group's trajectories), then every action of the batch is normalized by the batch's statistics
 * of those values, `(a - mu_batch) / (sigma_batch + eps)`: one scale for the whole batch rather
 * than one per prompt. The batch statistics are recorded on every group's result.
 *
 * @example
 * ```ts
 * reinforcePlusPlusAdvantages([groupA, groupB]).map((g) => g.batch); // the same stats twice
 * ```
 */
export function reinforcePlusPlusAdvantages(
  groups: readonly (readonly GroupTrajectory[])[],
  options: EstimatorOptions = DEFAULT_ESTIMATOR_OPTIONS,
): GroupAdvantages[] {
  if (groups.length === 0) throw new AdvantageInputError("groups", "[]", "at least one group");
  const centered = groups.map((g) =>
    estimateGroup(
      "reinforce++",
      g,
      options,
      ({ reward, global }) => reward === global.mu ? 0 : reward - global.mu,
    )
  );
  const values = centered.flatMap((g) => g.actions.map((a) => a.advantage));
  if (values.length === 0) {
    throw new AdvantageInputError("groups", "no actions", "at least one action in the batch");
  }
  const batch = baselineStatistics(values, options.sigma);
  return centered.map((g) =>
    Object.freeze({
      ...g,
      batch,
      actions: Object.freeze(
        g.actions.map((a) =>
          Object.freeze({ ...a, advantage: normalizedAdvantage(a.advantage, batch, options.eps) })
        ),
      ),
    })
  );
}
