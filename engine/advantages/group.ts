/**
 * Validation and per-agent bookkeeping shared by the group estimators: global statistics over the
 * trajectories' scores (each trajectory once), agent statistics over agent k's action rewards (a
 * trajectory once per action of k) with the Lemma 4.2 multiplier.
 */
import { AdvantageInputError } from "./errors.ts";
import { baselineStatistics, checkEstimatorOptions } from "./statistics.ts";
import type {
  ActionAdvantage,
  ActionRef,
  AgentStatistics,
  BaselineStatistics,
  EstimatorOptions,
  EstimatorScope,
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
      if (a.tokens !== undefined && !(Number.isInteger(a.tokens) && a.tokens >= 0)) {
        throw new AdvantageInputError(
          `trajectories[${i}].actions[${j}].tokens`,
          a.tokens,
          "an integer >= 0 or absent",
        );
      }
      if (a.baseline !== undefined && !Number.isFinite(a.baseline)) {
        throw new AdvantageInputError(
          `trajectories[${i}].actions[${j}].baseline`,
          a.baseline,
          "a finite number or absent",
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
 * A trajectory's score: the mean of its actions' rewards (each its own, else the trajectory's),
 * or its reward when it has no actions. This is the Dr. MAS code's per-trajectory score under
 * GRPO with `group_by_agent_id=False` (`verl/trainer/ppo/core_algos.py`,
 * compute_grpo_outcome_advantage, lines 539-550 at langfengQ/DrMAS 19c632b: `traj_accumulator`
 * collects every action's penalized score and `traj2avg` is their mean, which then replaces each
 * action's own score). A global baseline must normalize these scores, not the actions' own
 * rewards over statistics of other values: that divides a penalty by eps when sigma = 0.
 *
 * @example
 * ```ts
 * trajectoryScore({ sample: 0, reward: 1, actions: [
 *   { agent: "solver", turn: 0 }, { agent: "verifier", turn: 1, reward: 0.9 },
 * ] }); // (1 + 0.9) / 2 = 0.95
 * ```
 */
export function trajectoryScore(t: GroupTrajectory): number {
  if (t.actions.length === 0) return t.reward;
  if (t.actions.every((a) => a.reward === undefined || a.reward === t.reward)) return t.reward;
  let sum = 0;
  for (const a of t.actions) sum += a.reward ?? t.reward;
  return sum / t.actions.length;
}

/**
 * Lemma 4.2's per-agent multiplier `(sigma_k^2 + (mu_k - mu)^2) / sigma^2`, all population
 * moments, mu and sigma over the trajectories' scores; null when sigma is 0.
 *
 * @example
 * ```ts
 * lemmaMultiplier([1, 1], [1, 0]); // (0 + 0.5^2) / 0.5^2 = 1
 * ```
 */
export function lemmaMultiplier(
  agentRewards: readonly number[],
  trajectoryScores: readonly number[],
): number | null {
  const global = baselineStatistics(trajectoryScores, "population");
  if (global.sigma === 0) return null;
  const agent = baselineStatistics(agentRewards, "population");
  return (agent.sigma ** 2 + (agent.mu - global.mu) ** 2) / global.sigma ** 2;
}

/** What an estimator sees when it scores one action. */
export interface ActionContext {
  /** The value being normalized: the action's reward or its trajectory's score (see `from`). */
  readonly value: number;
  /** Index of the action's trajectory in the group. */
  readonly trajectory: number;
  /** The trajectories' scores, in group order. */
  readonly scores: readonly number[];
  /** Over the trajectories' scores, each trajectory once. */
  readonly global: BaselineStatistics;
  /** Over agent k's action rewards, a trajectory once per action of k. */
  readonly agent: BaselineStatistics;
  readonly action: ActionRef;
}

/** How a group estimator scores each action. */
export interface GroupRule {
  /**
   * `trajectory-score`: every action of a trajectory gets the advantage of the trajectory's score
   * (a global baseline: GRPO, Dr. GRPO, RLOO, REINFORCE++). `action-reward`: each action's own
   * reward (an agent-wise baseline: Dr. MAS, MADA-RL).
   */
  readonly from: "trajectory-score" | "action-reward";
  readonly advantage: (action: ActionContext) => number;
}

/**
 * Runs a group estimator's common frame: validates, takes the global (trajectory scores) and
 * per-agent (action rewards) statistics, and asks `rule` for each action's advantage.
 */
export function estimateGroup(
  estimator: string,
  scope: EstimatorScope,
  trajectories: readonly GroupTrajectory[],
  options: EstimatorOptions,
  rule: GroupRule,
): GroupAdvantages {
  checkEstimatorOptions(options);
  checkGroup(trajectories);
  const scores = trajectories.map(trajectoryScore);
  const global = baselineStatistics(scores, options.sigma);
  const agents = new Map<string, AgentStatistics>();
  for (const [agent, rewards] of actionRewardsByAgent(trajectories)) {
    const stats = baselineStatistics(rewards, options.sigma);
    const multiplier = lemmaMultiplier(rewards, scores);
    agents.set(agent, Object.freeze({ agent, ...stats, multiplier }));
  }
  const actions: ActionAdvantage[] = [];
  for (const [trajectory, t] of trajectories.entries()) {
    for (const action of t.actions) {
      const reward = action.reward ?? t.reward;
      const value = rule.from === "trajectory-score" ? scores[trajectory] : reward;
      const agent = agents.get(action.agent)!;
      const advantage = rule.advantage({ value, trajectory, scores, global, agent, action });
      actions.push(Object.freeze({
        sample: t.sample,
        turn: action.turn,
        agent: action.agent,
        reward,
        score: value,
        advantage,
      }));
    }
  }
  return Object.freeze({
    kind: "group-advantages" as const,
    estimator,
    scope,
    options: Object.freeze({ ...options }),
    global,
    agents: Object.freeze([...agents.values()]),
    actions: Object.freeze(actions),
  });
}
