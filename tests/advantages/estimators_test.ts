import assert from "node:assert/strict";
import {
  AdvantageInputError,
  drMasAdvantages,
  type GroupAdvantages,
  type GroupTrajectory,
  grpoAdvantages,
  lemmaMultiplier,
} from "../../engine/advantages/mod.ts";
import { assertClose, REFINE_GROUP } from "./fixture.ts";

const EPS = 1e-6;
const population = { sigma: "population", eps: EPS } as const;
const unbiased = { sigma: "unbiased", eps: EPS } as const;

function advantageOf(result: GroupAdvantages, sample: number, turn: number): number {
  const found = result.actions.filter((a) => a.sample === sample && a.turn === turn);
  assert.equal(found.length, 1, `exactly one advantage for sample ${sample} turn ${turn}`);
  return found[0].advantage;
}

function agent(result: GroupAdvantages, id: string) {
  const found = result.agents.find((a) => a.agent === id);
  assert.ok(found, `statistics for ${id}`);
  return found;
}

Deno.test("GRPO: every action of a trajectory gets (R - mu)/(sigma + eps) over trajectories", () => {
  const r = grpoAdvantages(REFINE_GROUP, population);
  // mu = 3/4, sigma = sqrt(3)/4 = 0.4330127 (see fixture).
  assert.equal(r.global.mu, 0.75);
  assertClose(r.global.sigma, Math.sqrt(3) / 4);
  assert.equal(r.global.n, 4);
  // R = 1: 0.25 / (0.4330127 + 1e-6) = 0.5773489; R = 0: -0.75 / 0.4330137 = -1.7320468.
  const up = 0.25 / (Math.sqrt(3) / 4 + EPS);
  const down = -0.75 / (Math.sqrt(3) / 4 + EPS);
  for (const t of REFINE_GROUP) {
    for (const a of t.actions) {
      assertClose(advantageOf(r, t.sample, a.turn), t.reward === 1 ? up : down);
    }
  }
  assertClose(up, 0.5773489, 1e-7);
  assertClose(down, -1.7320468, 1e-7);
  assert.equal(r.actions.length, 14);
  assert.equal(r.estimator, "grpo");
  assert.deepEqual(r.options, population);
});

Deno.test("Dr. MAS: each agent normalized by its own action-weighted mu_k, sigma_k", () => {
  const r = drMasAdvantages(REFINE_GROUP, population);
  // verifier: mu = 4/7, sigma = 2 sqrt(3)/7; R=1: (3/7)/(2 sqrt3/7) = sqrt(3)/2 = 0.8660254,
  //   R=0: (-4/7)/(2 sqrt3/7) = -2/sqrt(3) = -1.1547005 (eps shifts the 7th digit).
  const v = agent(r, "verifier");
  assert.equal(v.n, 7);
  assertClose(v.mu, 4 / 7);
  assertClose(v.sigma, (2 * Math.sqrt(3)) / 7);
  assertClose(advantageOf(r, 0, 1), Math.sqrt(3) / 2, 1e-5);
  assertClose(advantageOf(r, 1, 5), -2 / Math.sqrt(3), 1e-5);
  assertClose(advantageOf(r, 0, 1), (3 / 7) / ((2 * Math.sqrt(3)) / 7 + EPS));
  // refiner: mu = 1/3, sigma = sqrt(2)/3; R=1: (2/3)/(sqrt2/3) = sqrt(2) = 1.4142136,
  //   R=0: (-1/3)/(sqrt2/3) = -1/sqrt(2) = -0.7071068.
  const f = agent(r, "refiner");
  assert.equal(f.n, 3);
  assertClose(f.mu, 1 / 3);
  assertClose(advantageOf(r, 3, 2), Math.SQRT2, 1e-5);
  assertClose(advantageOf(r, 1, 2), -Math.SQRT1_2, 1e-5);
  assertClose(advantageOf(r, 1, 4), -Math.SQRT1_2, 1e-5);
  // solver sees every trajectory once: the same as GRPO's global baseline.
  assertClose(advantageOf(r, 1, 0), -0.75 / (Math.sqrt(3) / 4 + EPS));
  assert.deepEqual(r.agents.map((a) => a.agent), ["refiner", "solver", "verifier"]);
});

Deno.test("unbiased (n-1) convention, the Dr. MAS code's, by hand", () => {
  const g = grpoAdvantages(REFINE_GROUP, unbiased);
  // sigma = 1/2: R=1 -> 0.25/0.500001 = 0.499999; R=0 -> -0.75/0.500001 = -1.499997.
  assert.equal(g.global.sigma, 0.5);
  assertClose(advantageOf(g, 0, 0), 0.25 / 0.500001);
  assertClose(advantageOf(g, 1, 3), -0.75 / 0.500001);
  const d = drMasAdvantages(REFINE_GROUP, unbiased);
  // verifier sigma = sqrt(2/7) = 0.5345225: R=1 -> (3/7)/0.5345235 = 0.8017822.
  assertClose(agent(d, "verifier").sigma, Math.sqrt(2 / 7));
  assertClose(advantageOf(d, 2, 1), (3 / 7) / (Math.sqrt(2 / 7) + EPS));
  assertClose(advantageOf(d, 2, 1), 0.8017822, 1e-6);
  // refiner sigma = sqrt(1/3) = 0.5773503: R=1 -> (2/3)/0.5773513 = 1.1547;
  //   R=0 -> (-1/3)/0.5773513 = -0.5773493.
  assertClose(advantageOf(d, 3, 2), (2 / 3) / (Math.sqrt(1 / 3) + EPS));
  assertClose(advantageOf(d, 1, 4), -0.5773493, 1e-6);
  assert.equal(d.options.sigma, "unbiased");
});

Deno.test("Lemma 4.2 multipliers by hand, and as the mean squared GRPO advantage of k's actions", () => {
  const r = grpoAdvantages(REFINE_GROUP, population);
  // solver: (3/16 + 0) / (3/16) = 1.
  assertClose(agent(r, "solver").multiplier!, 1);
  // verifier: (12/49 + (4/7 - 3/4)^2) / (3/16) = (192/784 + 25/784) * 16/3 = 217*16/2352 = 31/21.
  assertClose(agent(r, "verifier").multiplier!, 31 / 21);
  // refiner: (2/9 + (1/3 - 3/4)^2) / (3/16) = (32/144 + 25/144) * 16/3 = 57*16/432 = 19/9.
  assertClose(agent(r, "refiner").multiplier!, 19 / 9);
  // The same numbers from the lemma's left side: E over k's actions of ((R - mu)/sigma)^2.
  const sigma = Math.sqrt(3) / 4;
  for (const id of ["solver", "verifier", "refiner"]) {
    const mine = r.actions.filter((a) => a.agent === id);
    const meanSquare = mine.reduce((s, a) => s + ((a.reward - 0.75) / sigma) ** 2, 0) / mine.length;
    assertClose(agent(r, id).multiplier!, meanSquare, 1e-12, id);
  }
  // The multiplier is reported identically whichever estimator ran (it diagnoses GRPO's scale).
  assert.deepEqual(
    drMasAdvantages(REFINE_GROUP, population).agents.map((a) => a.multiplier),
    r.agents.map((a) => a.multiplier),
  );
  assert.equal(lemmaMultiplier([1, 1], [1, 0]), 1);
});

Deno.test("all-equal rewards: every advantage exactly 0, multiplier null, nothing NaN", () => {
  const flat: GroupTrajectory[] = REFINE_GROUP.map((t) => ({ ...t, reward: 0.1 }));
  for (const estimate of [grpoAdvantages, drMasAdvantages]) {
    for (const options of [population, unbiased]) {
      const r = estimate(flat, options);
      assert.ok(
        r.actions.every((a) => Object.is(a.advantage, 0)),
        `${r.estimator} ${options.sigma}`,
      );
      assert.equal(r.agents.length, 3);
      assert.ok(r.agents.every((a) => a.multiplier === null && a.sigma === 0));
    }
  }
});

Deno.test("a group of one: paper convention 0; code convention R/(1+eps), also per agent", () => {
  const one: GroupTrajectory[] = [
    {
      sample: 0,
      reward: 1,
      actions: [{ agent: "solver", turn: 0 }, { agent: "verifier", turn: 1 }],
    },
  ];
  assert.deepEqual(grpoAdvantages(one, population).actions.map((a) => a.advantage), [0, 0]);
  const code = drMasAdvantages(one, unbiased);
  // n_k = 1 for both agents: mu_k = 0, sigma_k = 1 -> 1 / (1 + 1e-6).
  assert.equal(code.agents.length, 2);
  assert.ok(code.agents.every((a) => a.mu === 0 && a.sigma === 1 && a.n === 1));
  assert.equal(code.actions.length, 2);
  assert.ok(code.actions.every((a) => a.advantage === 1 / (1 + EPS)));
});

Deno.test("trajectories with no actions still count in the global baseline", () => {
  // rewards [1, 0]: mu 0.5, sigma 0.5; the second trajectory has no actions (e.g. a format failure).
  const r = grpoAdvantages([
    { sample: 0, reward: 1, actions: [{ agent: "solver", turn: 0 }] },
    { sample: 1, reward: 0, actions: [] },
  ], population);
  assert.deepEqual(r.global, { mu: 0.5, sigma: 0.5, n: 2 });
  assert.equal(r.actions.length, 1);
  assertClose(r.actions[0].advantage, 0.5 / 0.500001);
});

Deno.test("malformed groups are rejected with the offending field", () => {
  const bad: Array<[GroupTrajectory[], string]> = [
    [[], "trajectories"],
    [[{ sample: 0, reward: NaN, actions: [] }], "trajectories[0].reward"],
    [
      [{ sample: 0, reward: 1, actions: [] }, { sample: 0, reward: 0, actions: [] }],
      "trajectories[1].sample",
    ],
    [
      [{ sample: 0, reward: 1, actions: [{ agent: "a", turn: 0 }, { agent: "b", turn: 0 }] }],
      "trajectories[0].actions[1].turn",
    ],
    [
      [{ sample: 0, reward: 1, actions: [{ agent: "", turn: 0 }] }],
      "trajectories[0].actions[0].agent",
    ],
    [
      [{ sample: 0, reward: 1, actions: [{ agent: "a", turn: 0, reward: Infinity }] }],
      "trajectories[0].actions[0].reward",
    ],
  ];
  for (const [group, field] of bad) {
    assert.throws(
      () => drMasAdvantages(group),
      (e) => e instanceof AdvantageInputError && e.field === field,
    );
  }
});

Deno.test("an action's own reward (e.g. R minus an invalid-action penalty) replaces R for that action", () => {
  // Trajectory rewards [1, 0]; s1's solver action was invalid: its reward is 0 - 0.1 = -0.1.
  const group: GroupTrajectory[] = [
    { sample: 0, reward: 1, actions: [{ agent: "solver", turn: 0 }] },
    { sample: 1, reward: 0, actions: [{ agent: "solver", turn: 0, reward: -0.1 }] },
  ];
  // GRPO: the global baseline is over the trajectories' scores (the mean of their actions'
  //   rewards, as the Dr. MAS code's traj2avg), [1, -0.1]: mu 0.45, sigma 0.55; numerator and
  //   statistics from the same values: s1 gets (-0.1 - 0.45) / 0.550001.
  const g = grpoAdvantages(group, population);
  assertClose(g.global.mu, 0.45);
  assertClose(g.global.sigma, 0.55);
  assertClose(advantageOf(g, 1, 0), -0.55 / 0.550001);
  assert.equal(g.actions[1].reward, -0.1);
  assert.equal(g.actions[1].score, -0.1);
  // Dr. MAS: solver rewards [1, -0.1]: mu 0.45, sigma 0.55; s0: 0.55/0.550001, s1: -0.55/0.550001.
  const d = drMasAdvantages(group, population);
  assertClose(agent(d, "solver").mu, 0.45);
  assertClose(agent(d, "solver").sigma, 0.55);
  assertClose(advantageOf(d, 0, 0), 0.55 / 0.550001);
  assertClose(advantageOf(d, 1, 0), -0.55 / 0.550001);
});
