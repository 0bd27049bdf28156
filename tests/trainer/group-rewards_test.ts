import assert from "node:assert/strict";
import { estimateStep, type EstimatorName } from "../../engine/advantages/mod.ts";
import { isCorrectAnswer, rewardGroup } from "../../engine/trainer/group-rewards.ts";
import { normalizeAnswer } from "../../engine/tasks/mod.ts";
import type { Episode, EpisodeTurn, TurnAction } from "../../engine/workflows/mod.ts";

type Extra = { responseTokens: { length: number } };

function turn(
  t: number,
  agent: string,
  role: string,
  action: TurnAction,
  valid: boolean,
  tokens: number,
): EpisodeTurn<Extra> {
  return {
    turn: t,
    agent,
    role,
    prompt: "",
    output: { text: "", extra: { responseTokens: { length: tokens } } },
    action,
    valid,
  };
}
const answer = (a: string | null): TurnAction => ({ kind: "answer", answer: a });
const verdict = (accept: boolean): TurnAction => ({ kind: "verdict", accept });
const close = (actual: number, expected: number) =>
  assert.ok(Math.abs(actual - expected) < 1e-5, `${actual} != ${expected}`);

/** Rewards one group and estimates it as the training loop does (a step of one prompt). */
function credit(
  gold: string,
  episodes: readonly Episode<Extra>[],
  estimator: EstimatorName,
  weights: Record<string, number> = { accuracy: 1 },
) {
  const rewards = rewardGroup(gold, episodes, {
    scheme: estimator === "mada" ? "mada" : "trajectory",
    weights,
    invalidActionPenalty: 0.1,
  });
  const [advantages] = estimateStep(estimator, [rewards.group], { sigma: "population", eps: 1e-6 });
  return { ...rewards, advantages };
}

Deno.test("refine credit: invalid actions are penalized, Dr. MAS normalizes per agent", () => {
  const episodes: Episode<Extra>[] = [
    {
      turns: [
        turn(0, "s", "solver", answer("4"), true, 3),
        turn(1, "v", "verifier", verdict(true), true, 2),
      ],
      finalAnswer: "4",
    },
    {
      turns: [
        turn(0, "s", "solver", answer("5"), true, 3),
        turn(1, "v", "verifier", verdict(false), false, 2),
        turn(2, "s", "solver", answer("5"), true, 3),
      ],
      finalAnswer: "5",
    },
  ];
  const c = credit("4", episodes, "dr-mas");
  assert.deepEqual(c.trajectories.map((t) => [t.correct, t.total]), [[true, 1], [false, 0]]);
  // Solver actions' rewards [1, 0, 0]: mu = 1/3, population sigma = sqrt(2/9).
  // Verifier actions' rewards [1, 0 - 0.1]: mu = 0.45, sigma = 0.55.
  const adv = c.advantages.actions.map((a) => [a.sample, a.agent, a.advantage] as const);
  const sigmaS = Math.sqrt(2 / 9);
  close(adv[0][2], (1 - 1 / 3) / (sigmaS + 1e-6));
  close(adv[1][2], 0.55 / (0.55 + 1e-6));
  close(adv[2][2], (0 - 1 / 3) / (sigmaS + 1e-6));
  close(adv[3][2], -0.55 / (0.55 + 1e-6));
  close(adv[4][2], (0 - 1 / 3) / (sigmaS + 1e-6));
  assert.deepEqual(c.trajectories[1].agentRewards, { s: 0, v: -0.1 });
});

Deno.test("debate credit under MADA-RL: normalized generators, counterfactual critics", () => {
  const episodes: Episode<Extra>[] = [
    {
      turns: [
        turn(0, "g1", "generator", answer("4"), true, 2),
        turn(1, "g2", "generator", answer("5"), true, 4),
        turn(2, "c1", "critic", answer("4"), true, 2),
      ],
      finalAnswer: "4",
    },
    {
      turns: [
        turn(0, "g1", "generator", answer("5"), true, 4),
        turn(1, "g2", "generator", answer("5"), true, 2),
        turn(2, "c1", "critic", answer("4"), true, 6),
      ],
      finalAnswer: "4",
    },
  ];
  const c = credit("4", episodes, "mada", { accuracy: 2, length: 1 });
  const byKey = Object.fromEntries(
    c.advantages.actions.map((a) => [`${a.sample}:${a.agent}`, [a.reward, a.advantage]]),
  );
  // g1: lengths [2, 4] -> lambda [0.5, -0.5]; rewards [2 + 0.5, 0 + min(0, -0.5)] = [2.5, -0.5]
  //     mu = 1, sigma = 1.5 -> advantages [1, -1].
  close(byKey["0:g1"][0], 2.5);
  close(byKey["1:g1"][0], -0.5);
  close(byKey["0:g1"][1], 1.5 / (1.5 + 1e-6));
  close(byKey["1:g1"][1], -1.5 / (1.5 + 1e-6));
  // g2: lengths [4, 2] -> lambda [-0.5, 0.5]; both wrong: len [-0.5, 0] -> rewards [-0.5, 0].
  close(byKey["0:g2"][0], -0.5);
  close(byKey["1:g2"][0], 0);
  // c1: lengths [2, 6] -> lambda [0.5, -0.5]; both right: rewards [2.5, 1.5];
  //     acc_G = [0.5, 0] -> A_C = R_C - 2 acc_G = [1.5, 1.5].
  close(byKey["0:c1"][1], 1.5);
  close(byKey["1:c1"][1], 1.5);
  assert.deepEqual(c.trajectories.map((t) => t.components.generator_accuracy), [0.5, 0]);
  assert.deepEqual(
    c.advantages.agents.map((a) => a.multiplier),
    [null, null, null],
    "MADA has no Lemma 4.2",
  );

  // The config's weights, not the paper's: accuracy 1 and no length part gives A_C = acc - acc_G.
  const plain = credit("4", episodes, "mada", { accuracy: 1 });
  const critic = plain.advantages.actions.filter((a) => a.agent === "c1");
  assert.deepEqual(critic.map((a) => [a.reward, a.advantage]), [[1, 0.5], [1, 1]]);
});

Deno.test("all-equal rewards give zero advantages, never NaN", () => {
  const ep: Episode<Extra> = {
    turns: [turn(0, "s", "solver", answer("4"), true, 1)],
    finalAnswer: "4",
  };
  for (const estimator of ["grpo", "dr-mas", "dr-grpo", "rloo", "reinforce++"] as const) {
    const c = credit("4", [ep, ep, ep], estimator);
    assert.deepEqual(c.advantages.actions.map((a) => a.advantage), [0, 0, 0], estimator);
  }
});

Deno.test("GRPO in a sigma = 0 group normalizes the penalized trajectory scores, bounded", () => {
  // Four right answers (R = 1); sample 0's verifier output is invalid (penalty 0.1). Dr. MAS code
  // (core_algos.py compute_grpo_outcome_advantage, group_by_agent_id=False): each trajectory's
  // score is the mean of its actions' scores, S = [(1 + 0.9) / 2, 1, 1, 1] = [0.95, 1, 1, 1];
  // mu = 3.95 / 4 = 0.9875; deviations [-0.0375, 0.0125 x 3]; population variance
  // (0.00140625 + 3 * 0.00015625) / 4 = 0.00046875, sigma = 0.0216506...; every action of sample 0
  // gets -0.0375 / sigma = -sqrt(3), the others 1 / sqrt(3): |A| <= sqrt(n - 1) = sqrt(3).
  // The old numerator (0.9 - 1) over the trajectory rewards' sigma = 0 gave -0.1 / 1e-6 = -1e5.
  const right = (validVerdict: boolean): Episode<Extra> => ({
    turns: [
      turn(0, "s", "solver", answer("4"), true, 3),
      turn(1, "v", "verifier", verdict(true), validVerdict, 2),
    ],
    finalAnswer: "4",
  });
  const c = credit("4", [right(false), right(true), right(true), right(true)], "grpo");
  const sigma = Math.sqrt(0.00046875);
  close(c.advantages.global.mu, 0.9875);
  close(c.advantages.global.sigma, sigma);
  assert.equal(c.advantages.actions.length, 8);
  for (const a of c.advantages.actions) {
    close(a.score, a.sample === 0 ? 0.95 : 1);
    close(a.advantage, a.sample === 0 ? -0.0375 / (sigma + 1e-6) : 0.0125 / (sigma + 1e-6));
    assert.ok(Math.abs(a.advantage) <= Math.sqrt(3), `${a.advantage} exceeds sqrt(n - 1)`);
  }
  // The verifier's own (penalized) reward is kept for the record.
  assert.equal(c.advantages.actions.find((a) => a.sample === 0 && a.agent === "v")!.reward, 0.9);
});

Deno.test("search answers are graded by exact match: a city's name is right, another is wrong", () => {
  // Before, the math grader found no answer in a gold like "Velan" and every search episode
  // scored 0, whatever the answerer said.
  const route = (to: "search" | "answer"): TurnAction => ({ kind: "route", to });
  const episode = (said: string): Episode<Extra> => ({
    turns: [
      turn(0, "verifier", "verifier", route("answer"), true, 3),
      turn(1, "answerer", "answerer", answer(said), true, 5),
    ],
    finalAnswer: said,
  });
  const { trajectories } = credit("Velan", ["Velan", "velan.", "Lozuvel"].map(episode), "dr-mas");
  assert.deepEqual(trajectories.map((t) => t.correct), [true, true, false]);
  assert.deepEqual(trajectories.map((t) => t.total), [1, 1, 0]);
  assert.equal(isCorrectAnswer("The Kalo-Ren", "kaloren"), true);
  assert.equal(normalizeAnswer("  The Kalo-Ren. "), "kaloren");
  // Math golds keep the math grader: equivalent forms are right, names are not.
  assert.equal(isCorrectAnswer("-3", "-3.0"), true);
  assert.equal(isCorrectAnswer("12", "twelve"), false);
  assert.equal(isCorrectAnswer("Velan", null), false);
});
