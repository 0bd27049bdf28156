/**
 * MADA-RL rewards and advantages (Pulici et al. 2026): generators learn from the group-normalized
 * advantage of `2*acc + len`; critics from the counterfactual, unnormalized
 * `A_C = R_C - 2*acc_G = 2*(acc - acc_G) + len`, where acc_G is the mean correctness of the
 * generators' answers to the same question in the same debate.
 */
import {
  type BaselineStatistics,
  baselineStatistics,
  checkEstimatorOptions,
  DEFAULT_ESTIMATOR_OPTIONS,
  type EstimatorOptions,
  normalizedAdvantage,
} from "../advantages/mod.ts";
import { RewardInputError } from "./errors.ts";
import {
  checkResponses,
  kimiLengthRewards,
  type LengthRewards,
  type ScoredResponse,
} from "./kimi-length.ts";

/** Weights of the reward's parts: `accuracy * acc + length * len`. */
export interface MadaWeights {
  readonly accuracy: number;
  readonly length: number;
}

/** The paper's `2*acc + len` (the presets' `rewards.weights` for debate-mada). */
export const MADA_WEIGHTS: MadaWeights = Object.freeze({ accuracy: 2, length: 1 });

function checkWeights(weights: MadaWeights): void {
  for (const part of ["accuracy", "length"] as const) {
    if (!Number.isFinite(weights[part])) {
      throw new RewardInputError(`weights.${part}`, weights[part], "a finite number");
    }
  }
}

function rewardsOf(
  responses: readonly ScoredResponse[],
  lengths: LengthRewards,
  weights: MadaWeights,
) {
  return responses.map((r, i) =>
    weights.accuracy * Number(r.correct) + weights.length * lengths.rewards[i]
  );
}

/** One generator's sampling group scored: rewards, baseline and advantages, per response. */
export interface MadaGeneratorResult {
  readonly kind: "mada-generator";
  readonly lengths: LengthRewards;
  readonly options: EstimatorOptions;
  readonly weights: MadaWeights;
  /** `2*acc + len` per response. */
  readonly rewards: readonly number[];
  readonly baseline: BaselineStatistics;
  readonly advantages: readonly number[];
}

/**
 * Generator rewards `2*acc + len` (or the given weights) over one sampling group (the responses of one generator to one
 * question), and their group-normalized advantages `(R - mu)/(sigma + eps)`.
 *
 * @example
 * ```ts
 * madaGeneratorAdvantages([{ length: 100, correct: true }, { length: 300, correct: false }]);
 * // rewards [2.5, -0.5], mu 1, sigma 1.5 -> advantages [~1, ~-1]
 * ```
 */
export function madaGeneratorAdvantages(
  responses: readonly ScoredResponse[],
  options: EstimatorOptions = DEFAULT_ESTIMATOR_OPTIONS,
  weights: MadaWeights = MADA_WEIGHTS,
): MadaGeneratorResult {
  checkEstimatorOptions(options);
  checkWeights(weights);
  const lengths = kimiLengthRewards(responses);
  const rewards = rewardsOf(responses, lengths, weights);
  const baseline = baselineStatistics(rewards, options.sigma);
  return Object.freeze({
    kind: "mada-generator" as const,
    lengths,
    options: Object.freeze({ ...options }),
    weights: Object.freeze({ ...weights }),
    rewards: Object.freeze(rewards),
    baseline,
    advantages: Object.freeze(rewards.map((r) => normalizedAdvantage(r, baseline, options.eps))),
  });
}

/**
 * acc_G: the mean correctness of the generators' final answers to one question in one debate.
 *
 * @example
 * ```ts
 * generatorAccuracy([true, false, true]); // 2/3
 * ```
 */
export function generatorAccuracy(generatorsCorrect: readonly boolean[]): number {
  if (generatorsCorrect.length === 0) {
    throw new RewardInputError("generatorsCorrect", "[]", "at least one generator answer");
  }
  return generatorsCorrect.filter(Boolean).length / generatorsCorrect.length;
}

/** A critic response with the accuracy of the generators in its own debate. */
export interface CriticResponse extends ScoredResponse {
  readonly generatorAccuracy: number;
}

/** One critic's sampling group scored with the counterfactual advantage. */
export interface MadaCriticResult {
  readonly kind: "mada-critic";
  readonly lengths: LengthRewards;
  readonly weights: MadaWeights;
  /** R_C = `2*acc + len` per response. */
  readonly rewards: readonly number[];
  /** The counterfactual baseline `2*acc_G` per response. */
  readonly baselines: readonly number[];
  /** `R_C - 2*acc_G`, not normalized. */
  readonly advantages: readonly number[];
}

/**
 * Critic advantages over one sampling group (one critic's responses to one question, each from
 * its own debate): the length reward is taken over this group, the baseline per debate;
 * with weights (a, l): `A_C = a*(acc - acc_G) + l*len`.
 *
 * @example
 * ```ts
 * madaCriticAdvantages([{ length: 50, correct: true, generatorAccuracy: 1 / 3 }]).advantages;
 * // one response: lambda = 0, R_C = 2, baseline 2/3 -> [4/3]
 * ```
 */
export function madaCriticAdvantages(
  critics: readonly CriticResponse[],
  weights: MadaWeights = MADA_WEIGHTS,
): MadaCriticResult {
  checkResponses(critics, "critics");
  checkWeights(weights);
  critics.forEach((c, i) => {
    if (!(c.generatorAccuracy >= 0 && c.generatorAccuracy <= 1)) {
      throw new RewardInputError(
        `critics[${i}].generatorAccuracy`,
        c.generatorAccuracy,
        "a number in [0, 1]",
      );
    }
  });
  const lengths = kimiLengthRewards(critics);
  const rewards = rewardsOf(critics, lengths, weights);
  // The counterfactual: what the critic would have scored by matching the generators' accuracy.
  const baselines = critics.map((c) => weights.accuracy * c.generatorAccuracy);
  return Object.freeze({
    kind: "mada-critic" as const,
    lengths,
    weights: Object.freeze({ ...weights }),
    rewards: Object.freeze(rewards),
    baselines: Object.freeze(baselines),
    advantages: Object.freeze(rewards.map((r, i) => r - baselines[i])),
  });
}
