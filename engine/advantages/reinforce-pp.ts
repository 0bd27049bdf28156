/** REINFORCE++ with baseline (Hu 2025): group-mean baseline, then whitening over the batch. */
import { firstActionBaseline } from "./first-action-baseline.ts";
import { estimateGroup, type GroupRule } from "./group.ts";
import { checkEstimatorOptions } from "./statistics.ts";
import {
  type BaselineStatistics,
  DEFAULT_ESTIMATOR_OPTIONS,
  type EstimatorOptions,
  type GroupAdvantages,
  type GroupTrajectory,
} from "./types.ts";
import { AdvantageInputError } from "./errors.ts";

/**
 * REINFORCE++-baseline as the Dr. MAS code computes it, over the step's whole batch of groups:
 * each action's OWN score r (its trajectory's reward minus its invalid-action penalty) minus the
 * mean of its group's first-action scores (0 for a group of one), then all actions of the batch
 * whitened together, `(a - mu_batch) / (sigma_batch + eps)`, the batch statistics weighted by each
 * action's response tokens: one scale for the whole batch rather than one per prompt.
 *
 * Follows `compute_reinforce_plus_plus_baseline_outcome_advantage` (langfengQ/DrMAS 19c632b,
 * `verl/trainer/ppo/core_algos.py` lines 634-677: `seen_pairs` keeps each trajectory's first row
 * for the mean, line 675 centres every row's own score), whose `masked_whiten`
 * (`verl/utils/torch_functional.py` lines 152-187) takes a token-weighted mean and the unbiased
 * token variance (`sigma: "unbiased"` here, the n being tokens), and puts its constant inside the
 * root, `rsqrt(var + 1e-8)`, where this project adds `eps` to sigma like every other estimator.
 * A batch whose actions carry no tokens has nothing to train and gets advantage 0.
 *
 * @example
 * ```ts
 * import { type GroupTrajectory, reinforcePlusPlusAdvantages } from "./mod.ts";
 * declare const groupA: readonly GroupTrajectory[];
 * declare const groupB: readonly GroupTrajectory[];
 * reinforcePlusPlusAdvantages([groupA, groupB]).map((g) => g.batch); // the same stats twice
 * ```
 */
export function reinforcePlusPlusAdvantages(
  groups: readonly (readonly GroupTrajectory[])[],
  options: EstimatorOptions = DEFAULT_ESTIMATOR_OPTIONS,
): GroupAdvantages[] {
  return whitenedOverBatch("reinforce++", groups, options, (g) => {
    const { mean } = firstActionBaseline(g);
    return {
      from: "action-reward",
      advantage: ({ value }) => value === mean ? 0 : value - mean,
    };
  });
}

/**
 * `reinforce++-trajectory`: as `reinforce++`, but every action of a trajectory is centred as its
 * trajectory's score S (the mean of its action rewards) minus the group's mean score (mu = 0 for
 * a group of one under `unbiased`), so a penalized action shares its trajectory's value. Equal to
 * `reinforce++` without invalid actions. This was `reinforce++` before the code's form became the
 * default.
 */
export function reinforcePlusPlusTrajectoryAdvantages(
  groups: readonly (readonly GroupTrajectory[])[],
  options: EstimatorOptions = DEFAULT_ESTIMATOR_OPTIONS,
): GroupAdvantages[] {
  return whitenedOverBatch("reinforce++-trajectory", groups, options, () => ({
    from: "trajectory-score",
    advantage: ({ value, global }) => value === global.mu ? 0 : value - global.mu,
  }));
}

/** Centres each group by its rule, then whitens every action of the batch together. */
function whitenedOverBatch(
  estimator: string,
  groups: readonly (readonly GroupTrajectory[])[],
  options: EstimatorOptions,
  centre: (group: readonly GroupTrajectory[]) => GroupRule,
): GroupAdvantages[] {
  checkEstimatorOptions(options);
  if (groups.length === 0) throw new AdvantageInputError("groups", "[]", "at least one group");
  const centered = groups.map((g) => estimateGroup(estimator, "batch", g, options, centre(g)));
  // estimateGroup lists actions in trajectory order, then action order: zip by position.
  const weighted = centered.flatMap((g, gi) => {
    const tokens = groups[gi].flatMap((t) => t.actions.map((a) => a.tokens ?? 1));
    return g.actions.map((a, j) => ({ value: a.advantage, weight: tokens[j] }));
  });
  const batch = weightedStatistics(weighted, options);
  return centered.map((g) =>
    Object.freeze({
      ...g,
      batch,
      actions: Object.freeze(g.actions.map((a) => {
        const whitened = a.advantage === batch.mu || batch.n === 0
          ? 0
          : (a.advantage - batch.mu) / (batch.sigma + options.eps);
        return Object.freeze({ ...a, advantage: whitened });
      })),
    })
  );
}

/**
 * mu and sigma of values repeated `weight` times each (summed in order, so bit-stable); `n` is the
 * total weight. All-equal values: sigma 0. Under `unbiased`, a total weight of 1 has sigma 0 (the
 * code raises there; one token has nothing to whiten against).
 */
function weightedStatistics(
  items: readonly { value: number; weight: number }[],
  options: EstimatorOptions,
): BaselineStatistics {
  const live = items.filter((i) => i.weight > 0);
  let n = 0;
  let sum = 0;
  for (const { value, weight } of live) {
    n += weight;
    sum += value * weight;
  }
  if (n === 0) return Object.freeze({ mu: 0, sigma: 0, n: 0 });
  if (live.every((i) => i.value === live[0].value)) {
    return Object.freeze({ mu: live[0].value, sigma: 0, n });
  }
  const mu = sum / n;
  let squares = 0;
  for (const { value, weight } of live) squares += weight * (value - mu) ** 2;
  const divisor = options.sigma === "population" ? n : n - 1;
  return Object.freeze({ mu, sigma: divisor > 0 ? Math.sqrt(squares / divisor) : 0, n });
}
