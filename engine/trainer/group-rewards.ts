/**
 * Credit assignment for one prompt group: grade every trajectory, weigh its reward components,
 * give each action its reward (the trajectory's, minus the Dr. MAS invalid-action penalty; in a
 * debate each answer's own), and compute advantages with the configured estimator. MADA-RL
 * (`estimator.kind = "mada"`) normalizes generators per agent over the group and gives critics
 * the unnormalized counterfactual advantage `2 (acc - acc_G) + len`.
 */
import {
  type ActionRef,
  baselineStatistics,
  estimateBatch,
  type EstimatorOptions,
  type GroupAdvantages,
  type GroupTrajectory,
} from "../advantages/mod.ts";
import {
  actionReward,
  generatorAccuracy,
  kimiLengthRewards,
  madaCriticAdvantages,
  madaGeneratorAdvantages,
  weightedReward,
} from "../rewards/mod.ts";
import { gradeAnswer } from "../tasks/mod.ts";
import type { Episode, EpisodeTurn } from "../workflows/mod.ts";

/** The token count of a turn, which rewards need (length reward, placement). */
export interface TurnTokens {
  readonly responseTokens: { readonly length: number };
}

/** The reward settings of a config. */
export interface CreditSettings {
  readonly estimator: "grpo" | "dr-mas" | "dr-grpo" | "rloo" | "reinforce++" | "mada";
  readonly options: EstimatorOptions;
  readonly weights: Readonly<Partial<Record<"accuracy" | "length" | "format", number>>>;
  readonly invalidActionPenalty: number;
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

/** The credit of a whole group, ready for the reward and advantage events. */
export interface GroupCredit {
  readonly trajectories: readonly TrajectoryCredit[];
  readonly advantages: GroupAdvantages;
}

/** Whether an answer a workflow extracted (null: none) is equivalent to the gold answer. */
export function isCorrectAnswer(gold: string, answer: string | null): boolean {
  return answer !== null && gradeAnswer(gold, `\\boxed{${answer}}`).equivalent;
}

function turnTokens<E extends TurnTokens>(t: EpisodeTurn<E>): number {
  return t.output.extra.responseTokens.length;
}

/**
 * Grades and rewards a group of episodes (index = sample) for a question with gold answer `gold`.
 *
 * @example
 * ```ts
 * const credit = assignCredit("4", episodes, {
 *   estimator: "dr-mas", options: { sigma: "population", eps: 1e-6 },
 *   weights: { accuracy: 1 }, invalidActionPenalty: 0.1,
 * });
 * ```
 */
export function assignCredit<E extends TurnTokens>(
  gold: string,
  episodes: readonly Episode<E>[],
  settings: CreditSettings,
): GroupCredit {
  if (settings.estimator === "mada") return madaCredit(gold, episodes, settings);
  const correct = episodes.map((e) => isCorrectAnswer(gold, e.finalAnswer));
  const lengths = kimiLengthRewards(episodes.map((e, i) => ({
    length: Math.max(1, e.turns.reduce((n, t) => n + turnTokens(t), 0)),
    correct: correct[i],
  })));
  const trajectories = episodes.map((episode, sample): TrajectoryCredit => {
    const components = {
      accuracy: Number(correct[sample]),
      length: lengths.rewards[sample],
      format: episode.turns.filter((t) => t.valid).length / Math.max(1, episode.turns.length),
    };
    const total = weightedReward(components, settings.weights as Record<string, number>);
    const agentRewards = meanByAgent(episode.turns.map((t) => ({
      agent: t.agent,
      reward: actionReward(total, t.valid, settings.invalidActionPenalty),
    })));
    return { sample, correct: correct[sample], components, total, agentRewards };
  });
  const group: GroupTrajectory[] = episodes.map((episode, sample) => ({
    sample,
    reward: trajectories[sample].total,
    actions: episode.turns.map((t): ActionRef => ({
      agent: t.agent,
      turn: t.turn,
      reward: actionReward(trajectories[sample].total, t.valid, settings.invalidActionPenalty),
    })),
  }));
  const [advantages] = estimateBatch(settings.estimator, [group], settings.options);
  return { trajectories, advantages };
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
 * MADA-RL: each generator's answers across the group's debates form its sampling group (Kimi
 * length and the normalization are taken there); each critic's answers likewise for the length
 * reward, with `acc_G` the generators' accuracy in the critic's own debate. The reward is the
 * config's `accuracy * acc + length * len` (the debate-mada preset: the paper's 2 and 1).
 */
function madaCredit<E extends TurnTokens>(
  gold: string,
  episodes: readonly Episode<E>[],
  settings: CreditSettings,
): GroupCredit {
  const turnCorrect = episodes.map((e) => e.turns.map((t) => isCorrectAnswer(gold, answerOf(t))));
  const accG = episodes.map((e, s) =>
    generatorAccuracy(e.turns.flatMap((t, j) => t.role === "generator" ? [turnCorrect[s][j]] : []))
  );
  // advantage and reward of (sample, turn index in episode)
  const perTurn = episodes.map((e) => e.turns.map(() => ({ reward: 0, advantage: 0 })));
  const agentIds = [...new Set(episodes.flatMap((e) => e.turns.map((t) => t.agent)))].sort();
  const weights = {
    accuracy: settings.weights.accuracy ?? 0,
    length: settings.weights.length ?? 0,
  };
  const agentStats: GroupAdvantages["agents"][number][] = [];
  for (const agent of agentIds) {
    const slots = episodes.flatMap((e, s) =>
      e.turns.flatMap((t, j) => t.agent === agent ? [{ s, j, t }] : [])
    );
    const responses = slots.map(({ s, j, t }) => ({
      length: Math.max(1, turnTokens(t)),
      correct: turnCorrect[s][j],
    }));
    if (slots[0].t.role === "generator") {
      const result = madaGeneratorAdvantages(responses, settings.options, weights);
      slots.forEach(({ s, j }, i) => {
        perTurn[s][j] = { reward: result.rewards[i], advantage: result.advantages[i] };
      });
      agentStats.push({ agent, ...result.baseline, multiplier: null });
    } else {
      const result = madaCriticAdvantages(
        responses.map((r, i) => ({ ...r, generatorAccuracy: accG[slots[i].s] })),
        weights,
      );
      slots.forEach(({ s, j }, i) => {
        perTurn[s][j] = { reward: result.rewards[i], advantage: result.advantages[i] };
      });
      // Critic advantages are not normalized (their baseline is 2 acc_G per debate); the
      // statistics recorded are those of the rewards themselves.
      agentStats.push({
        agent,
        ...baselineStatistics(result.rewards, settings.options.sigma),
        multiplier: null,
      });
    }
  }
  const trajectories = episodes.map((episode, sample): TrajectoryCredit => {
    const correct = isCorrectAnswer(gold, episode.finalAnswer);
    const components = { accuracy: Number(correct), generator_accuracy: accG[sample] };
    return {
      sample,
      correct,
      components,
      total: Number(correct),
      agentRewards: meanByAgent(
        episode.turns.map((t, j) => ({ agent: t.agent, reward: perTurn[sample][j].reward })),
      ),
    };
  });
  return {
    trajectories,
    advantages: {
      kind: "group-advantages",
      estimator: "mada",
      options: settings.options,
      global: baselineStatistics(trajectories.map((t) => t.total), settings.options.sigma),
      agents: agentStats,
      actions: episodes.flatMap((e, sample) =>
        e.turns.map((t, j) => ({
          sample,
          turn: t.turn,
          agent: t.agent,
          reward: perTurn[sample][j].reward,
          advantage: perTurn[sample][j].advantage,
        }))
      ),
    },
  };
}

function answerOf(t: EpisodeTurn): string | null {
  return t.action.kind === "answer" ? t.action.answer : null;
}
