/** REINFORCE++ with baseline (Hu 2025): group-mean baseline, then whitening over the batch. */
import { estimateGroup } from "./group.ts";
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
 * REINFORCE++-baseline over the step's whole batch of groups: each action first gets
 * `S_i - mu_group` (mu over its group's trajectory scores; a group of one under `unbiased` has
 * mu = 0, as the code), then all actions of the batch are whitened together,
 * `(a - mu_batch) / (sigma_batch + eps)`, with the batch statistics weighted by each action's
 * response tokens: one scale for the whole batch rather than one per prompt.
 *
 * Follows `compute_reinforce_plus_plus_baseline_outcome_advantage` (langfengQ/DrMAS 19c632b,
 * `verl/trainer/ppo/core_algos.py` lines 634-677), whose `masked_whiten`
 * (`verl/utils/torch_functional.py` lines 152-187) takes a token-weighted mean and the unbiased
 * token variance (`sigma: "unbiased"` here, the n being tokens), and puts its constant inside the
 * root, `rsqrt(var + 1e-8)`, where this project adds `eps` to sigma like every other estimator.
 * A batch whose actions carry no tokens has nothing to train and gets advantage 0.
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
  checkEstimatorOptions(options);
  if (groups.length === 0) throw new AdvantageInputError("groups", "[]", "at least one group");
  const centered = groups.map((g) =>
    estimateGroup("reinforce++", "batch", g, options, {
      from: "trajectory-score",
      advantage: ({ value, global }) => value === global.mu ? 0 : value - global.mu,
    })
  );
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
