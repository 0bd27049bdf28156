/**
 * Rollout/training mismatch: an inference server's logprobs of the tokens it sampled differ from
 * the trainer's own graph's (other kernels, batch shapes, precision), so the rollout policy is
 * not exactly the policy the update treats as old. Truncated importance sampling ("Your
 * efficient RL framework secretly brings you off-policy RL training", Yao et al. 2025) weights
 * each token's policy loss by min(pi_trainer / pi_rollout, cap), detached. This follows veRL
 * (volcengine/verl at b178a3cd): verl/trainer/ppo/rollout_corr_helper.py line 779 (log_ratio =
 * old_log_prob - rollout_log_prob, the trainer's recomputed old logprobs over the rollout's),
 * lines 530-534 (per-token weight exp of the log ratio clamped to +-SAFETY_BOUND = 20, line 75),
 * line 562 (weights.clamp(max=rollout_is_threshold), the cap; default 2.0, line 485), and
 * verl/trainer/ppo/core_algos.py lines 1238-1239 (pg_losses * rollout_is_weights, before the
 * loss aggregation; the KL and entropy terms are not weighted).
 *
 * The weight enters here as a factor of each token's advantage: the loss per token is
 * max(-A r, -A clip(r)), and for w > 0, max(-wA r, -wA clip(r)) = w max(-A r, -A clip(r)), so
 * scaling A by w is exactly veRL's pg_losses * w, with no change to the train-step graph.
 */

/** |trainer - server| logprob above which a token counts as mismatched, in nats. */
export const MISMATCH_THRESHOLD = 0.1;

/** veRL's clamp of the log ratio before exp (rollout_corr_helper.py SAFETY_BOUND). */
const SAFETY_BOUND = 20;

/**
 * The truncated importance weight of one token: min(exp(trainer - rollout), cap).
 *
 * @example
 * ```ts
 * import { tisWeight } from "./rollout-correction.ts";
 *
 * tisWeight(-0.5, -1.5, 2); // 2 (exp(1) = 2.718... truncated to the cap)
 * ```
 */
export function tisWeight(trainer: number, rollout: number, cap: number): number {
  const logRatio = Math.min(SAFETY_BOUND, Math.max(-SAFETY_BOUND, trainer - rollout));
  return Math.min(Math.exp(logRatio), cap);
}

/** The mismatch of one group's tokens in one step, as `gradient_step.applied` records it. */
export interface RolloutMismatch {
  readonly tokens: number;
  readonly meanAbs: number;
  readonly maxAbs: number;
  readonly threshold: number;
  readonly overThreshold: number;
  readonly tisCap: number;
  readonly tisTruncated: number;
}

/**
 * The mismatch between the trainer's logprobs and the server's, per turn over its tokens, and
 * each token's TIS weight (all 1 when `cap` is 0, TIS off).
 *
 * @example
 * ```ts
 * import { rolloutCorrection } from "./rollout-correction.ts";
 *
 * const trainer = [Float32Array.of(-1)];
 * const { mismatch, weights } = rolloutCorrection(trainer, [Float32Array.of(-1.2)], 2);
 * mismatch.maxAbs; // 0.20000004768371582 (-1.2 as a float32)
 * weights[0][0]; // 1.2214027643203735: exp(maxAbs) stored as a float32
 * ```
 */
export function rolloutCorrection(
  trainer: readonly Float32Array[],
  rollout: readonly Float32Array[],
  cap: number,
): { mismatch: RolloutMismatch; weights: Float32Array[] } {
  let tokens = 0;
  let sum = 0;
  let max = 0;
  let over = 0;
  let truncated = 0;
  const weights = trainer.map((t, i) =>
    t.map((logprob, j) => {
      const delta = Math.abs(logprob - rollout[i][j]);
      tokens++;
      sum += delta;
      max = Math.max(max, delta);
      if (delta > MISMATCH_THRESHOLD) over++;
      if (cap === 0) return 1;
      if (logprob - rollout[i][j] > Math.log(cap)) truncated++;
      return tisWeight(logprob, rollout[i][j], cap);
    })
  );
  const share = (n: number) => tokens === 0 ? 0 : n / tokens;
  return {
    mismatch: {
      tokens,
      meanAbs: share(sum),
      maxAbs: max,
      threshold: MISMATCH_THRESHOLD,
      overThreshold: share(over),
      tisCap: cap,
      tisTruncated: share(truncated),
    },
    weights,
  };
}
