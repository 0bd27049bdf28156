/**
 * Reward assignment for one prompt group: grade every trajectory, weigh its reward components,
 * and give each action its reward (the trajectory's, minus the Dr. MAS invalid-action penalty, or
 * its role's reward hook's where a custom workflow declares one; in a debate each answer's own,
 * with the MADA-RL critic's counterfactual baseline). The estimator then sees the step's groups
 * together (`estimateStep` in engine/advantages).
 */
import type { ActionRef, GroupTrajectory, RewardScheme } from "../advantages/mod.ts";
import {
  actionReward,
  generatorAccuracy,
  kimiLengthRewards,
  madaCriticAdvantages,
  madaGeneratorAdvantages,
  weightedReward,
} from "../rewards/mod.ts";
import { exactMatch, gradeAnswer } from "../tasks/mod.ts";
import type { Episode, EpisodeTurn, RoleReward, RoleRewardInput } from "../workflows/mod.ts";

/** The token count of a turn, which rewards need (length reward, placement, batch whitening). */
export interface TurnTokens {
  readonly responseTokens: { readonly length: number };
}

/** The reward settings of a config. */
export interface RewardSettings {
  /** The estimator's, from its registry entry (engine/advantages/registry.ts). */
  readonly scheme: RewardScheme;
  readonly weights: Readonly<Partial<Record<"accuracy" | "length" | "format", number>>>;
  readonly invalidActionPenalty: number;
  /**
   * The workflow's reward hooks by role (`Workflow.rewards`): under the trajectory scheme a
   * hooked role's turns get the hook's reward instead of the trajectory's.
   */
  readonly roleRewards?: Readonly<Record<string, RoleReward>>;
}

/** A role's reward hook gave something other than a finite number. */
export class RoleRewardError extends Error {
  override name = "RoleRewardError";
}

/** One trajectory's grade and reward. */
export interface TrajectoryCredit {
  readonly sample: number;
  readonly correct: boolean;
  readonly components: Readonly<Record<string, number>>;
  readonly total: number;
  /** Per-agent rewards of this trajectory (mean over the agent's actions). */
  readonly agentRewards: Readonly<Record<string, number>>;
}

/** A prompt group graded and rewarded: the reward events' content and the estimator's input. */
export interface GroupRewards {
  readonly trajectories: readonly TrajectoryCredit[];
  readonly group: readonly GroupTrajectory[];
}

/**
 * Whether an answer a workflow extracted (null: none) is equivalent to the gold answer: by the
 * math grader, or, for a gold in which it finds no math answer (a search task's city or
 * country), by exact match after Search-R1's normalization.
 */
export function isCorrectAnswer(gold: string, answer: string | null): boolean {
  if (answer === null) return false;
  const graded = gradeAnswer(gold, `\\boxed{${answer}}`);
  return graded.gold.extracted === null ? exactMatch(gold, answer) : graded.equivalent;
}

function turnTokens<E extends TurnTokens>(t: EpisodeTurn<E>): number {
  return t.output.extra.responseTokens.length;
}

/**
 * Grades and rewards a group of episodes (index = sample) for a question with gold answer `gold`.
 *
 * @example
 * ```ts
 * import type { Episode } from "../workflows/mod.ts";
 * import { rewardGroup, type TurnTokens } from "./group-rewards.ts";
 * declare const episodes: readonly Episode<TurnTokens>[]; // one prompt's group, gold answer "4"
 * const { trajectories, group } = rewardGroup("4", episodes, {
 *   scheme: "trajectory", weights: { accuracy: 1 }, invalidActionPenalty: 0.1,
 * });
 * ```
 */
export function rewardGroup<E extends TurnTokens>(
  gold: string,
  episodes: readonly Episode<E>[],
  settings: RewardSettings,
): GroupRewards {
  if (settings.scheme === "mada") return madaRewards(gold, episodes, settings);
  const correct = episodes.map((e) => isCorrectAnswer(gold, e.finalAnswer));
  const lengths = kimiLengthRewards(episodes.map((e, i) => ({
    length: Math.max(1, e.turns.reduce((n, t) => n + turnTokens(t), 0)),
    correct: correct[i],
  })));
  const trajectories: TrajectoryCredit[] = [];
  const group: GroupTrajectory[] = [];
  episodes.forEach((episode, sample) => {
    const components = {
      accuracy: Number(correct[sample]),
      length: lengths.rewards[sample],
      format: episode.turns.filter((t) => t.valid).length / Math.max(1, episode.turns.length),
    };
    const total = weightedReward(components, settings.weights as Record<string, number>);
    const actions = episode.turns.map((t): ActionRef => {
      const hook = settings.roleRewards?.[t.role];
      return {
        agent: t.agent,
        turn: t.turn,
        role: t.role,
        tokens: turnTokens(t),
        reward: hook
          ? hookedReward(hook, {
            turn: t,
            episode,
            correct: correct[sample],
            trajectoryReward: total,
          })
          : actionReward(total, t.valid, settings.invalidActionPenalty),
      };
    });
    trajectories.push({
      sample,
      correct: correct[sample],
      components,
      total,
      agentRewards: meanByAgent(actions.map((a) => ({ agent: a.agent, reward: a.reward! }))),
    });
    group.push({ sample, reward: total, actions });
  });
  return { trajectories, group };
}

function hookedReward(hook: RoleReward, input: RoleRewardInput): number {
  const reward = hook(input);
  if (typeof reward !== "number" || !Number.isFinite(reward)) {
    const { role, agent, turn } = input.turn;
    throw new RoleRewardError(
      `the reward hook of role ${role} gave ${String(reward)} for agent ${agent}'s turn ${turn}; ` +
        "a reward hook must return a finite number",
    );
  }
  return reward;
}

function meanByAgent(rewards: readonly { agent: string; reward: number }[]) {
  const sums = new Map<string, { sum: number; n: number }>();
  for (const { agent, reward } of rewards) {
    const s = sums.get(agent) ?? { sum: 0, n: 0 };
    s.sum += reward;
    s.n += 1;
    sums.set(agent, s);
  }
  return Object.fromEntries([...sums].sort().map(([a, s]) => [a, s.sum / s.n]));
}

/**
 * MADA-RL: each generator's answers across the group's debates form its sampling group (the Kimi
 * length reward is taken there); each critic's answers likewise, with `acc_G` the generators'
 * accuracy in the critic's own debate as its counterfactual baseline `accuracy * acc_G`. The
 * reward is the config's `accuracy * acc + length * len` (the debate-mada preset: the paper's 2
 * and 1). The trajectory's own reward is its final answer's correctness.
 */
function madaRewards<E extends TurnTokens>(
  gold: string,
  episodes: readonly Episode<E>[],
  settings: RewardSettings,
): GroupRewards {
  const turnCorrect = episodes.map((e) => e.turns.map((t) => isCorrectAnswer(gold, answerOf(t))));
  const accG = episodes.map((e, s) =>
    generatorAccuracy(e.turns.flatMap((t, j) => t.role === "generator" ? [turnCorrect[s][j]] : []))
  );
  // reward (and critic baseline) of (sample, turn index in episode)
  const perTurn = episodes.map((e) =>
    e.turns.map(() => ({ reward: 0, baseline: undefined as number | undefined }))
  );
  const agentIds = [...new Set(episodes.flatMap((e) => e.turns.map((t) => t.agent)))].sort();
  const weights = {
    accuracy: settings.weights.accuracy ?? 0,
    length: settings.weights.length ?? 0,
  };
  for (const agent of agentIds) {
    const slots = episodes.flatMap((e, s) =>
      e.turns.flatMap((t, j) => t.agent === agent ? [{ s, j, t }] : [])
    );
    const responses = slots.map(({ s, j, t }) => ({
      length: Math.max(1, turnTokens(t)),
      correct: turnCorrect[s][j],
    }));
    if (slots[0].t.role === "generator") {
      const { rewards } = madaGeneratorAdvantages(responses, undefined, weights);
      slots.forEach(({ s, j }, i) => perTurn[s][j] = { reward: rewards[i], baseline: undefined });
    } else {
      const { rewards, baselines } = madaCriticAdvantages(
        responses.map((r, i) => ({ ...r, generatorAccuracy: accG[slots[i].s] })),
        weights,
      );
      slots.forEach(({ s, j }, i) =>
        perTurn[s][j] = { reward: rewards[i], baseline: baselines[i] }
      );
    }
  }
  const trajectories: TrajectoryCredit[] = [];
  const group: GroupTrajectory[] = [];
  episodes.forEach((episode, sample) => {
    const correct = isCorrectAnswer(gold, episode.finalAnswer);
    const actions = episode.turns.map((t, j): ActionRef => ({
      agent: t.agent,
      turn: t.turn,
      role: t.role,
      tokens: turnTokens(t),
      reward: perTurn[sample][j].reward,
      ...(perTurn[sample][j].baseline === undefined
        ? {}
        : { baseline: perTurn[sample][j].baseline }),
    }));
    trajectories.push({
      sample,
      correct,
      components: { accuracy: Number(correct), generator_accuracy: accG[sample] },
      total: Number(correct),
      agentRewards: meanByAgent(actions.map((a) => ({ agent: a.agent, reward: a.reward! }))),
    });
    group.push({ sample, reward: Number(correct), actions });
  });
  return { trajectories, group };
}

function answerOf(t: EpisodeTurn): string | null {
  return t.action.kind === "answer" ? t.action.answer : null;
}
