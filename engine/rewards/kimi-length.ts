/**
 * The Kimi k1.5 length reward (Kimi Team 2025), as MADA-RL uses it: over the responses sampled
 * for one question, `lambda = 0.5 - (len - min) / (max - min)`; a correct response earns lambda,
 * a wrong one `min(0, lambda)` (short wrong answers are not rewarded, long ones are penalized).
 *
 * When every response has the same length (max == min) the formula is 0/0; we set lambda = 0 for
 * all: the group carries no length information, so length neither rewards nor penalizes and the
 * reward reduces to its accuracy part.
 */
import { RewardInputError } from "./errors.ts";

/** A response as the length reward sees it: its token count and whether its answer is right. */
export interface ScoredResponse {
  readonly length: number;
  readonly correct: boolean;
}

/** Per-response lambda and length reward, with the group's min and max length. */
export interface LengthRewards {
  readonly kind: "kimi-length-rewards";
  readonly minLength: number;
  readonly maxLength: number;
  readonly lambdas: readonly number[];
  readonly rewards: readonly number[];
}

/** Throws unless the group is non-empty with integer lengths >= 0 and boolean correctness. */
export function checkResponses(responses: readonly ScoredResponse[], field = "responses"): void {
  if (responses.length === 0) {
    throw new RewardInputError(field, "[]", "at least one response in the sampling group");
  }
  responses.forEach((r, i) => {
    if (!Number.isInteger(r.length) || r.length < 0) {
      throw new RewardInputError(
        `${field}[${i}].length`,
        r.length,
        "a non-negative integer token count",
      );
    }
    if (typeof r.correct !== "boolean") {
      throw new RewardInputError(`${field}[${i}].correct`, r.correct, "true or false");
    }
  });
}

/**
 * Length rewards of one sampling group.
 *
 * @example
 * ```ts
 * kimiLengthRewards([{ length: 100, correct: true }, { length: 300, correct: false }]).rewards;
 * // lambdas 0.5 and -0.5 -> rewards [0.5, -0.5]
 * ```
 */
export function kimiLengthRewards(responses: readonly ScoredResponse[]): LengthRewards {
  checkResponses(responses);
  const lengths = responses.map((r) => r.length);
  const minLength = Math.min(...lengths);
  const maxLength = Math.max(...lengths);
  const lambdas = lengths.map((len) =>
    maxLength === minLength ? 0 : 0.5 - (len - minLength) / (maxLength - minLength)
  );
  const rewards = lambdas.map((lambda, i) => (responses[i].correct ? lambda : Math.min(0, lambda)));
  return Object.freeze({
    kind: "kimi-length-rewards" as const,
    minLength,
    maxLength,
    lambdas: Object.freeze(lambdas),
    rewards: Object.freeze(rewards),
  });
}
