import { StatsInputError } from "./stats-input-error.ts";

/** Population mean and standard deviation (divide by n), the Dr. MAS paper's convention. */
export function populationMoments(xs: readonly number[], field: string): {
  mean: number;
  sd: number;
} {
  if (xs.length === 0) throw new StatsInputError(field, "[]", "need at least one reward");
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  const variance = xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length;
  return { mean, sd: Math.sqrt(variance) };
}

/**
 * Dr. MAS Lemma 4.2: under one global GRPO baseline (mu, sigma) the second moment of agent k's
 * gradient is scaled by `(sigma_k^2 + (mu_k - mu)^2) / sigma^2`, where mu_k, sigma_k are taken
 * over agent k's actions. 1 means no mismatch; agent-wise normalization makes it 1 by design.
 *
 * @example
 * ```ts
 * lemmaMultiplier({ muK: 0.5, sigmaK: 0.5, mu: 0.5, sigma: 0.5 }); // 1
 * ```
 */
export function lemmaMultiplier(
  m: { readonly muK: number; readonly sigmaK: number; readonly mu: number; readonly sigma: number },
): number {
  if (!(m.sigma > 0)) {
    throw new StatsInputError(
      "sigma",
      m.sigma,
      "the global reward spread must be > 0 (all rewards equal)",
    );
  }
  return (m.sigmaK ** 2 + (m.muK - m.mu) ** 2) / m.sigma ** 2;
}

/**
 * Lemma 4.2 multiplier from rewards: `trajectoryRewards` holds each trajectory of the group once
 * (GRPO's baseline); `agentActionRewards` holds a trajectory's reward once per action of agent k
 * (action-weighted, as Dr. MAS defines mu_k, sigma_k).
 *
 * @example
 * ```ts
 * lemmaMultiplierFromRewards([0, 1], [1, 1, 0]); // (2/9 + 1/36) / (1/4) = 1
 * ```
 */
export function lemmaMultiplierFromRewards(
  trajectoryRewards: readonly number[],
  agentActionRewards: readonly number[],
): number {
  const global = populationMoments(trajectoryRewards, "trajectoryRewards");
  const agent = populationMoments(agentActionRewards, "agentActionRewards");
  return lemmaMultiplier({ muK: agent.mean, sigmaK: agent.sd, mu: global.mean, sigma: global.sd });
}
