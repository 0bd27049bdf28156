/** Shapes shared by the group-baseline estimators. */

/**
 * What an estimator's statistics range over: one prompt group (`group`), the whole step's batch
 * of groups (`batch`), or one group with a rule per workflow role (`role`).
 */
export type EstimatorScope = "group" | "batch" | "role";

/**
 * How the trainer turns a group's grades into the rewards an estimator reads
 * (engine/trainer/group-rewards.ts): `trajectory` gives every action its trajectory's weighted
 * reward (minus the invalid-action penalty); `mada` gives each debate answer its own, MADA-RL's,
 * with the critics' counterfactual baseline.
 */
export type RewardScheme = "trajectory" | "mada";

/**
 * How sigma divides: `population` (by n, the Dr. MAS paper's definition; the default) or
 * `unbiased` (by n - 1, the Dr. MAS code's torch.std convention).
 */
export type SigmaConvention = "population" | "unbiased";

/** Estimator options recorded in the advantages event. */
export interface EstimatorOptions {
  readonly sigma: SigmaConvention;
  /** Added to sigma in the denominator: (R - mu) / (sigma + eps). */
  readonly eps: number;
}

/** The paper's convention with the Dr. MAS code's eps. */
export const DEFAULT_ESTIMATOR_OPTIONS: EstimatorOptions = Object.freeze({
  sigma: "population",
  eps: 1e-6,
});

/** One action (agent output) inside a trajectory; `turn` is unique within its trajectory. */
export interface ActionRef {
  readonly agent: string;
  readonly turn: number;
  /**
   * The action's own scalar reward when it differs from the trajectory's: the trajectory reward
   * minus an invalid-action penalty (Dr. MAS), or a per-agent reward (MADA-RL). Defaults to the
   * trajectory's reward.
   */
  readonly reward?: number;
  /**
   * Response tokens of the action (default 1): batch whitening weighs each action by them, as
   * veRL's `masked_whiten` averages over the response mask.
   */
  readonly tokens?: number;
  /** The workflow role ("generator", "critic", ...), for role-scope estimators (MADA-RL). */
  readonly role?: string;
  /** A counterfactual baseline of this action's reward (MADA-RL critics: `2 * acc_G`). */
  readonly baseline?: number;
}

/**
 * One sampled trajectory of a group: its scalar reward and the actions taken, in order. A global
 * baseline averages the trajectories' scores, each trajectory once; a score is the mean of the
 * trajectory's action rewards (`trajectoryScore`), the reward itself unless an action differs.
 */
export interface GroupTrajectory {
  readonly sample: number;
  readonly reward: number;
  readonly actions: readonly ActionRef[];
}

/** mu, sigma and the count they were taken over. */
export interface BaselineStatistics {
  readonly mu: number;
  readonly sigma: number;
  readonly n: number;
}

/**
 * Agent k's statistics over its actions in the group (action-weighted), plus the Lemma 4.2
 * multiplier `(sigma_k^2 + (mu_k - mu)^2) / sigma^2` against the trajectory-weighted global
 * baseline. The multiplier uses population moments (the lemma is an identity over uniform
 * sampling from agent k's actions) and is null when the global population sigma is 0, where the
 * lemma does not apply.
 */
export interface AgentStatistics extends BaselineStatistics {
  readonly agent: string;
  readonly multiplier: number | null;
}

/** One action's advantage; exactly one per action of the group. */
export interface ActionAdvantage {
  readonly sample: number;
  readonly turn: number;
  readonly agent: string;
  /** The action's own reward (the trajectory's unless penalized or per-agent). */
  readonly reward: number;
  /**
   * The value the advantage was computed from: the action's own reward under an agent-wise
   * baseline (Dr. MAS), its trajectory's score under a global one (GRPO, RLOO, ...).
   */
  readonly score: number;
  readonly advantage: number;
}

/** Everything an estimator decided for one group, ready to be logged as the advantages event. */
export interface GroupAdvantages {
  readonly kind: "group-advantages";
  readonly estimator: string;
  /** Where the estimator's statistics come from (see the registry). */
  readonly scope: EstimatorScope;
  readonly options: EstimatorOptions;
  /** Over the group's trajectories, each counted once. */
  readonly global: BaselineStatistics;
  /** Sorted by agent id. */
  readonly agents: readonly AgentStatistics[];
  /** In trajectory order, then action order. */
  readonly actions: readonly ActionAdvantage[];
  /** Batch-level statistics, for estimators that normalize across groups (REINFORCE++). */
  readonly batch?: BaselineStatistics;
}
