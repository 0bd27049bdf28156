/** MADA-RL's role-specific advantages (Pulici et al. 2026, Sec. 3). */
import { AdvantageInputError } from "./errors.ts";
import { estimateGroup } from "./group.ts";
import { normalizedAdvantage } from "./statistics.ts";
import {
  DEFAULT_ESTIMATOR_OPTIONS,
  type EstimatorOptions,
  type GroupAdvantages,
  type GroupTrajectory,
} from "./types.ts";

/**
 * MADA-RL: a generator's answer gets its reward `2*acc + len` normalized over that generator's
 * answers in the group, `(r - mu_k) / (sigma_k + eps)`; a critic's answer gets the unnormalized
 * counterfactual `r - baseline`, the baseline being `2 * acc_G` of its own debate (the reward
 * side, engine/rewards, supplies it on the action). Agent statistics are recorded for both roles;
 * only generators use them. No Lemma 4.2 multiplier: there is no global baseline to compare with.
 *
 * @example
 * ```ts
 * madaAdvantages([{ sample: 0, reward: 0, actions: [
 *   { agent: "gen0", turn: 0, role: "generator", reward: 2.5 },
 *   { agent: "critic0", turn: 1, role: "critic", reward: 2, baseline: 1 },
 * ] }]).actions.map((a) => a.advantage); // [0 (one answer), 1]
 * ```
 */
export function madaAdvantages(
  trajectories: readonly GroupTrajectory[],
  options: EstimatorOptions = DEFAULT_ESTIMATOR_OPTIONS,
): GroupAdvantages {
  const result = estimateGroup("mada", "role", trajectories, options, {
    from: "action-reward",
    advantage: ({ value, agent, action, trajectory }) => {
      if (action.role === "critic") {
        if (action.baseline === undefined) {
          throw new AdvantageInputError(
            `trajectories[${trajectory}] turn ${action.turn} (critic ${action.agent}).baseline`,
            undefined,
            "the counterfactual 2*acc_G of its debate (engine/rewards madaCriticAdvantages)",
          );
        }
        return value - action.baseline;
      }
      return normalizedAdvantage(value, agent, options.eps);
    },
  });
  // Lemma 4.2 compares an agent's baseline with GRPO's global one; MADA-RL has no global one.
  return Object.freeze({
    ...result,
    agents: Object.freeze(result.agents.map((a) => Object.freeze({ ...a, multiplier: null }))),
  });
}
