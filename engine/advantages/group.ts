/**
 * Validation and per-agent bookkeeping shared by the group estimators: global (trajectory-
 * weighted) statistics, agent (action-weighted) statistics with the Lemma 4.2 multiplier.
 */
import { AdvantageInputError } from "./errors.ts";
import { baselineStatistics, checkEstimatorOptions } from "./statistics.ts";
import type {
  ActionAdvantage,
  AgentStatistics,
  BaselineStatistics,
  EstimatorOptions,
  GroupAdvantages,
  GroupTrajectory,
} from "./types.ts";

/** Throws on an empty group, non-finite rewards, duplicate samples or turns, or empty agent ids. */
export function checkGroup(trajectories: readonly GroupTrajectory[]): void {
  if (trajectories.length === 0) {
    throw new AdvantageInputError("trajectories", "[]", "at least one trajectory per group");
  }
  const samples = new Set<number>();
  trajectories.forEach((t, i) => {
    if (!Number.isFinite(t.reward)) {
      throw new AdvantageInputError(`trajectories[${i}].reward`, t.reward, "a finite number");
    }
    if (samples.has(t.sample)) {
      throw new AdvantageInputError(
        `trajectories[${i}].sample`,
        t.sample,
        "a sample id unique in the group",
      );
    }
    samples.add(t.sample);
    const turns = new Set<number>();
    t.actions.forEach((a, j) => {
      if (typeof a.agent !== "string" || a.agent.length === 0) {
        throw new AdvantageInputError(
          `trajectories[${i}].actions[${j}].agent`,
          a.agent,
          "a non-empty agent id",
        );
      }
      if (a.reward !== undefined && !Number.isFinite(a.reward)) {
        throw new AdvantageInputError(
          `trajectories[${i}].actions[${j}].reward`,
          a.reward,
          "a finite number or absent",
        );
      }
      if (turns.has(a.turn)) {
        throw new AdvantageInputError(
          `trajectories[${i}].actions[${j}].turn`,
          a.turn,
          "a turn unique in its trajectory",
        );
      }
      turns.add(a.turn);
    });
  });
}

/**
 * Rewards of agent k's actions (each action's own reward, else its trajectory's), so a trajectory
 * counts once per action of k; agents sorted by id.
 */
export function actionRewardsByAgent(
  trajectories: readonly GroupTrajectory[],
): ReadonlyMap<string, readonly number[]> {
  const byAgent = new Map<string, number[]>();
  for (const t of trajectories) {
    for (const a of t.actions) {
      const list = byAgent.get(a.agent) ?? [];
      list.push(a.reward ?? t.reward);
      byAgent.set(a.agent, list);
    }
  }
  return new Map([...byAgent].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Lemma 4.2's per-agent multiplier `(sigma_k^2 + (mu_k - mu)^2) / sigma^2`, all population
 * moments, mu and sigma over trajectories; null when sigma is 0.
 *
 * @example
 * ```ts
 * lemmaMultiplier([1, 1], [1, 0]); // (0 + 0.5^2) / 0.5^2 = 1
 * ```
 */
export function lemmaMultiplier(
  agentRewards: readonly number[],
  trajectoryRewards: readonly number[],
): number | null {
  const global = baselineStatistics(trajectoryRewards, "population");
  if (global.sigma === 0) return null;
  const agent = baselineStatistics(agentRewards, "population");
  return (agent.sigma ** 2 + (agent.mu - global.mu) ** 2) / global.sigma ** 2;
}

/** What an estimator sees when it scores one action. */
export interface ActionContext {
  /** The action's reward (its own, else its trajectory's). */
  readonly reward: number;
  /** Index of the action's trajectory in the group. */
  readonly trajectory: number;
  readonly global: BaselineStatistics;
  readonly agent: BaselineStatistics;
}

/**
 * Runs a group estimator's common frame: validates, takes the global and per-agent statistics,
 * and asks `advantageOf` for each action's advantage given those statistics.
 */
export function estimateGroup(
  estimator: string,
  trajectories: readonly GroupTrajectory[],
  options: EstimatorOptions,
  advantageOf: (action: ActionContext) => number,
): GroupAdvantages {
  checkEstimatorOptions(options);
  checkGroup(trajectories);
  const trajectoryRewards = trajectories.map((t) => t.reward);
  const global = baselineStatistics(trajectoryRewards, options.sigma);
  const agents = new Map<string, AgentStatistics>();
  for (const [agent, rewards] of actionRewardsByAgent(trajectories)) {
    const stats = baselineStatistics(rewards, options.sigma);
    const multiplier = lemmaMultiplier(rewards, trajectoryRewards);
    agents.set(agent, Object.freeze({ agent, ...stats, multiplier }));
  }
  const actions: ActionAdvantage[] = [];
  for (const [trajectory, t] of trajectories.entries()) {
    for (const a of t.actions) {
      const reward = a.reward ?? t.reward;
      const agent = agents.get(a.agent)!;
      const advantage = advantageOf({ reward, trajectory, global, agent });
      actions.push(
        Object.freeze({ sample: t.sample, turn: a.turn, agent: a.agent, reward, advantage }),
      );
    }
  }
  return Object.freeze({
    kind: "group-advantages" as const,
    estimator,
    options: Object.freeze({ ...options }),
    global,
    agents: Object.freeze([...agents.values()]),
    actions: Object.freeze(actions),
  });
}
