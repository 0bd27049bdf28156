import assert from "node:assert/strict";
import {
  AdvantageInputError,
  drGrpoAdvantages,
  estimateStep,
  ESTIMATOR_NAMES,
  ESTIMATOR_REGISTRY,
  type GroupAdvantages,
  type GroupTrajectory,
  reinforcePlusPlusAdvantages,
  reinforcePlusPlusTrajectoryAdvantages,
  rlooAdvantages,
  rlooTrajectoryAdvantages,
} from "../../engine/advantages/mod.ts";
import { assertClose, REFINE_GROUP } from "./fixture.ts";

const options = { sigma: "population", eps: 1e-6 } as const;
const bySample = (r: GroupAdvantages) =>
  REFINE_GROUP.map((t) => r.actions.filter((a) => a.sample === t.sample).map((a) => a.advantage));

Deno.test("Dr. GRPO: R - mu over trajectories, no division by sigma", () => {
  // mu = 3/4: R=1 -> 0.25, R=0 -> -0.75, for every action of the trajectory.
  const r = drGrpoAdvantages(REFINE_GROUP, options);
  assert.deepEqual(bySample(r), [
    [0.25, 0.25],
    Array(6).fill(-0.75),
    [0.25, 0.25],
    Array(4).fill(0.25),
  ]);
});

Deno.test("RLOO: leave-one-out mean baseline by hand", () => {
  // rewards [1, 0, 1, 1], sum 3: s0 baseline (3 - 1)/3 = 2/3 -> 1/3; s1 baseline 3/3 = 1 -> -1;
  // s2, s3 like s0. (Equivalently n/(n-1) * (R - mu) = 4/3 * 0.25 and 4/3 * -0.75.)
  const r = rlooAdvantages(REFINE_GROUP, options);
  const [s0, s1, s2, s3] = bySample(r);
  for (const a of [...s0, ...s2, ...s3]) assertClose(a, 1 / 3);
  for (const a of s1) assert.equal(a, -1);
  // A group of one keeps its raw score, as the code (rloo-trajectory: 0). All-equal: exactly 0.
  assert.equal(rlooAdvantages([REFINE_GROUP[0]], options).actions[0].advantage, 1);
  assert.equal(rlooTrajectoryAdvantages([REFINE_GROUP[0]], options).actions[0].advantage, 0);
  const flat = REFINE_GROUP.map((t) => ({ ...t, reward: 0.1 }));
  assert.ok(rlooAdvantages(flat, options).actions.every((a) => Object.is(a.advantage, 0)));
});

/** s0 R=1 whose solver action was invalid (penalty 0.1), then the verifier; s1 R=0. */
const PENALIZED: GroupTrajectory[] = [
  {
    sample: 0,
    reward: 1,
    actions: [{ agent: "solver", turn: 0, reward: 0.9 }, { agent: "verifier", turn: 1 }],
  },
  { sample: 1, reward: 0, actions: [{ agent: "solver", turn: 0 }] },
];

Deno.test("RLOO with an invalid action: the code's own-score numerator vs the trajectory's", () => {
  // The code: first-action scores [0.9, 0], m = 0.45, n = 2, each action (r - m) * 2:
  // s0 solver (0.9 - 0.45) * 2 = 0.9, s0 verifier (1 - 0.45) * 2 = 1.1, s1 solver -0.9.
  const code = rlooAdvantages(PENALIZED, options).actions.map((a) => a.advantage);
  [0.9, 1.1, -0.9].forEach((want, i) => assertClose(code[i], want));
  // Trajectory scores S = [0.95, 0]: both of s0's actions get 0.95, s1's -0.95.
  const trajectory = rlooTrajectoryAdvantages(PENALIZED, options).actions.map((a) => a.advantage);
  [0.95, 0.95, -0.95].forEach((want, i) => assertClose(trajectory[i], want));
});

Deno.test("REINFORCE++ with an invalid action: centred on the first-action mean, then whitened", () => {
  // The code centres r - m with m = 0.45: [0.45, 0.55, -0.45] before whitening; the trajectory
  // form S - mu with mu = 0.475: [0.475, 0.475, -0.475].
  const centred = (g: GroupAdvantages[]) => {
    const { mu, sigma } = g[0].batch!;
    return g[0].actions.map((a) => a.advantage * (sigma + options.eps) + mu);
  };
  [0.45, 0.55, -0.45].forEach((want, i) =>
    assertClose(centred(reinforcePlusPlusAdvantages([PENALIZED], options))[i], want)
  );
  [0.475, 0.475, -0.475].forEach((want, i) =>
    assertClose(centred(reinforcePlusPlusTrajectoryAdvantages([PENALIZED], options))[i], want)
  );
});

Deno.test("REINFORCE++-baseline: group-mean centering, then one batch-wide normalization", () => {
  const second: GroupTrajectory[] = [
    { sample: 0, reward: 2, actions: [{ agent: "solver", turn: 0 }] },
    { sample: 1, reward: 0, actions: [{ agent: "solver", turn: 0 }] },
  ];
  // Centered: REFINE_GROUP has 8 actions at 1 - 0.75 = 0.25 and 6 at -0.75; the second group
  // (mu 1) has +1 and -1. Batch of 16: sum 2 - 4.5 + 0 = -2.5, mu = -0.15625;
  // squared deviations 8*0.40625^2 + 6*0.59375^2 + 1.15625^2 + 0.84375^2
  //   = 1.3203125 + 2.115234375 + 1.3369140625 + 0.7119140625 = 5.484375;
  // population var 5.484375/16 = 0.3427734375, sigma = 0.5854686.
  // +1 -> 1.15625/0.5854696 = 1.9749105; 0.25 -> 0.40625/0.5854696 = 0.6938875;
  // -0.75 -> -0.59375/0.5854696 = -1.0141432.
  const [a, b] = reinforcePlusPlusAdvantages([REFINE_GROUP, second], options);
  assert.equal(a.batch!.mu, -0.15625);
  assertClose(a.batch!.sigma, Math.sqrt(0.3427734375));
  assert.deepEqual(a.batch, b.batch);
  assertClose(b.actions[0].advantage, 1.9749105, 1e-7);
  assertClose(a.actions[0].advantage, 0.6938875, 1e-7);
  assertClose(a.actions[2].advantage, -1.0141432, 1e-7);
  assert.equal(a.estimator, "reinforce++");
});

Deno.test("estimateStep dispatches by config name and rejects unknown names", () => {
  const viaName = estimateStep("dr-mas", [REFINE_GROUP, REFINE_GROUP], options);
  assert.equal(viaName.length, 2);
  assert.equal(viaName[0].estimator, "dr-mas");
  assert.equal(estimateStep("reinforce++", [REFINE_GROUP], options)[0].batch!.n, 14);
  for (const name of ESTIMATOR_NAMES) {
    const [result] = estimateStep(name, [REFINE_GROUP], options);
    assert.equal(result.estimator, name);
    assert.equal(result.scope, ESTIMATOR_REGISTRY[name].scope);
  }
  assert.throws(
    () => estimateStep("ppo-gae", [REFINE_GROUP], options),
    (e) => e instanceof AdvantageInputError && /one of dr-mas, grpo/.test(e.message),
  );
});
