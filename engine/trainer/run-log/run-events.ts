/**
 * The events a training step logs about its rollouts: each turn, each trajectory, its rewards
 * and the advantages of its prompt group. Pure builders; the loop decides when they are sent.
 */
import type { NewEvent } from "../../../events/mod.ts";
import type { GroupAdvantages } from "../../advantages/mod.ts";
import type { Episode, Question } from "../../workflows/mod.ts";
import { type GroupRewards, isCorrectAnswer } from "../group-rewards.ts";
import type { Phase, Rollout, TurnRecord } from "../rollout/mod.ts";

/** The trajectory id of an episode: readable and unique within a run. */
export function trajectoryId(phase: Phase, step: number, prompt: number, sample: number): string {
  return `${phase}-s${step}-p${prompt}-k${sample}`;
}

/**
 * The `turn.generated` events of an episode and its `trajectory.completed`.
 *
 * @example
 * ```ts
 * import type { NewEvent } from "../../../events/mod.ts";
 * import type { Episode, Question } from "../../workflows/mod.ts";
 * import type { TurnRecord } from "../rollout/mod.ts";
 * import { episodeEvents } from "./run-events.ts";
 *
 * declare const question: Question;
 * declare const episode: Episode<TurnRecord>; // its turns and answer, which was correct
 * const events: NewEvent[] = [];
 * const [prompt, sample] = [0, 1]; // the group's first prompt, its second sample
 * events.push(...episodeEvents("rollout", 0, prompt, sample, question, episode, true));
 * ```
 */
export function episodeEvents(
  phase: Phase,
  step: number,
  prompt: number,
  sample: number,
  question: Question,
  episode: Episode<TurnRecord>,
  correct: boolean,
): NewEvent[] {
  const trajectory = trajectoryId(phase, step, prompt, sample);
  const last = episode.turns[episode.turns.length - 1];
  return [
    ...episode.turns.map((t): NewEvent => ({
      type: "turn.generated",
      data: {
        step,
        phase,
        trajectory,
        prompt,
        sample,
        turn: t.turn,
        agent: t.agent,
        role: t.role,
        workerGroup: t.output.extra.workerGroup,
        promptTokens: t.output.extra.promptTokens,
        responseTokens: t.output.extra.responseTokens,
        logprobs: t.output.extra.logprobs,
        finishReason: t.output.extra.finishReason,
        parsedAnswer: t.action.kind === "answer" ? t.action.answer : null,
        correct: t.action.kind === "answer" && t.action.answer !== null
          ? isCorrectAnswer(question.answer, t.action.answer)
          : null,
        text: t.output.text,
      },
    })),
    {
      type: "trajectory.completed",
      data: {
        step,
        phase,
        trajectory,
        prompt,
        sample,
        problemId: question.id,
        question: question.problem,
        gold: question.answer,
        turns: episode.turns.length,
        agents: [...new Set(episode.turns.map((t) => t.agent))],
        finalAnswer: episode.finalAnswer,
        correct,
        tokens: episode.turns.reduce((n, t) => n + t.output.extra.responseTokens.length, 0),
        terminationReason: episode.finalAnswer === null
          ? "no_answer"
          : last?.output.extra.finishReason === "length"
          ? "max_tokens"
          : "answered",
      },
    },
  ];
}

/** A `reward.assigned` event: a trajectory's (agent null) or one agent's share of it. */
export function rewardEvent(
  phase: Phase,
  step: number,
  prompt: number,
  sample: number,
  agent: string | null,
  components: Readonly<Record<string, number>>,
  total: number,
): NewEvent {
  return {
    type: "reward.assigned",
    data: {
      step,
      phase,
      trajectory: trajectoryId(phase, step, prompt, sample),
      prompt,
      sample,
      agent,
      components: { ...components },
      total,
    },
  };
}

/** The `advantages.computed` event of one prompt group. */
export function advantagesEvent(step: number, prompt: number, result: GroupAdvantages): NewEvent {
  return {
    type: "advantages.computed",
    data: {
      step,
      prompt,
      estimator: result.estimator,
      scope: result.scope,
      sigmaConvention: result.options.sigma,
      eps: result.options.eps,
      baseline: {
        global: result.global,
        perAgent: Object.fromEntries(
          result.agents.map((a) => [
            a.agent,
            { mu: a.mu, sigma: a.sigma, n: a.n, multiplier: a.multiplier },
          ]),
        ),
        batch: result.batch ?? null,
      },
      advantages: result.actions.map((a) => ({
        trajectory: trajectoryId("rollout", step, prompt, a.sample),
        sample: a.sample,
        agent: a.agent,
        turn: a.turn,
        reward: a.reward,
        score: a.score,
        advantage: a.advantage,
      })),
    },
  };
}

/**
 * Every event of a step's rollouts in prompt order: each episode's turns and trajectory, its
 * rewards (the trajectory's and each agent's share), then the group's advantages.
 */
export function rolloutEvents(
  step: number,
  rollouts: readonly Rollout[],
  rewards: readonly GroupRewards[],
  advantages: readonly GroupAdvantages[],
): NewEvent[] {
  return rollouts.flatMap(({ question, episodes }, prompt) => [
    ...episodes.flatMap((episode, sample) => {
      const t = rewards[prompt].trajectories[sample];
      return [
        ...episodeEvents("rollout", step, prompt, sample, question, episode, t.correct),
        rewardEvent("rollout", step, prompt, sample, null, t.components, t.total),
        ...Object.entries(t.agentRewards).map(([agent, r]) =>
          rewardEvent("rollout", step, prompt, sample, agent, { reward: r }, r)
        ),
      ];
    }),
    advantagesEvent(step, prompt, advantages[prompt]),
  ]);
}
