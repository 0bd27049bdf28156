/**
 * Dr. MAS reward placement: every agent output of a trajectory carries the trajectory reward on
 * its last token, minus an invalid-action penalty when that output was not a valid action (an
 * unparseable tool call, a missing answer tag). All other tokens carry 0.
 */
import { RewardInputError } from "./errors.ts";

/** What placement needs of one agent output. */
export interface AgentOutput {
  /** Generated tokens, including the end-of-sequence token: at least 1. */
  readonly tokens: number;
  readonly valid: boolean;
}

/** One output's scalar reward and its token-level rewards (reward on the last token). */
export interface PlacedReward {
  readonly kind: "placed-reward";
  readonly reward: number;
  readonly tokenRewards: Float32Array;
}

/**
 * The scalar reward of one action: `R - penalty` if invalid, else `R`.
 *
 * @example
 * ```ts
 * actionReward(1, false, 0.1); // 0.9
 * ```
 */
export function actionReward(trajectoryReward: number, valid: boolean, penalty: number): number {
  if (!Number.isFinite(trajectoryReward)) {
    throw new RewardInputError("trajectoryReward", trajectoryReward, "a finite number");
  }
  if (!Number.isFinite(penalty) || penalty < 0) {
    throw new RewardInputError("invalidActionPenalty", penalty, "a finite number >= 0");
  }
  return valid ? trajectoryReward : trajectoryReward - penalty;
}

/**
 * Places the trajectory reward on the last token of every agent output.
 *
 * @example
 * ```ts
 * placeRewards([{ tokens: 3, valid: true }, { tokens: 2, valid: false }], 1, 0.1);
 * // [{ reward: 1, tokenRewards: [0, 0, 1] }, { reward: 0.9, tokenRewards: [0, 0.9] }]
 * ```
 */
export function placeRewards(
  outputs: readonly AgentOutput[],
  trajectoryReward: number,
  invalidActionPenalty: number,
): readonly PlacedReward[] {
  return Object.freeze(outputs.map((output, i) => {
    if (!Number.isInteger(output.tokens) || output.tokens < 1) {
      throw new RewardInputError(
        `outputs[${i}].tokens`,
        output.tokens,
        "an integer >= 1 (the EOS counts)",
      );
    }
    const reward = actionReward(trajectoryReward, output.valid, invalidActionPenalty);
    const tokenRewards = new Float32Array(output.tokens);
    tokenRewards[output.tokens - 1] = reward;
    return Object.freeze({ kind: "placed-reward" as const, reward, tokenRewards });
  }));
}
