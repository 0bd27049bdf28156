import assert from "node:assert/strict";
import {
  generatorAccuracy,
  madaCriticAdvantages,
  madaGeneratorAdvantages,
  RewardInputError,
} from "../../engine/rewards/mod.ts";

const close = (a: number, b: number, tol = 1e-12) =>
  assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);

Deno.test("MADA generator: 2*acc + len, then group-normalized", () => {
  // lengths 100 T, 200 T, 300 F, 500 F: len rewards 0.5, 0.25, 0, -0.5 (see kimi-length_test);
  // rewards 2.5, 2.25, 0, -0.5; sum 4.25, mu = 1.0625;
  // deviations 1.4375, 1.1875, -1.0625, -1.5625; squares 2.06640625 + 1.41015625 + 1.12890625
  //   + 2.44140625 = 7.046875; population var 1.76171875, sigma = 1.3272975.
  const r = madaGeneratorAdvantages([
    { length: 100, correct: true },
    { length: 200, correct: true },
    { length: 300, correct: false },
    { length: 500, correct: false },
  ]);
  assert.deepEqual(r.rewards, [2.5, 2.25, 0, -0.5]);
  assert.equal(r.baseline.mu, 1.0625);
  close(r.baseline.sigma, Math.sqrt(1.76171875));
  close(r.baseline.sigma, 1.3272975, 1e-7);
  // 1.4375 / 1.3272985 = 1.0830269; -1.5625 / 1.3272985 = -1.1772031.
  const scale = Math.sqrt(1.76171875) + 1e-6;
  [1.4375, 1.1875, -1.0625, -1.5625].forEach((d, i) => close(r.advantages[i], d / scale));
  close(r.advantages[0], 1.0830269, 1e-7);
  close(r.advantages[3], -1.1772031, 1e-7);
  // The code's unbiased convention divides the 7.046875 by 3: sigma = sqrt(2.3489583) = 1.5326312.
  const u = madaGeneratorAdvantages(
    [
      { length: 100, correct: true },
      { length: 200, correct: true },
      { length: 300, correct: false },
      { length: 500, correct: false },
    ],
    { sigma: "unbiased", eps: 1e-6 },
  );
  close(u.baseline.sigma, Math.sqrt(7.046875 / 3));
  close(u.advantages[3], -1.5625 / (Math.sqrt(7.046875 / 3) + 1e-6));
});

Deno.test("MADA generator: a group that is all right with equal lengths has advantage 0", () => {
  const r = madaGeneratorAdvantages([{ length: 9, correct: true }, { length: 9, correct: true }]);
  assert.deepEqual(r.rewards, [2, 2]);
  assert.deepEqual(r.advantages, [0, 0]);
});

Deno.test("generator accuracy acc_G is the mean correctness within one debate", () => {
  assert.equal(generatorAccuracy([true, false, false]), 1 / 3);
  assert.equal(generatorAccuracy([true, true, true]), 1);
  assert.throws(() => generatorAccuracy([]), RewardInputError);
});

Deno.test("MADA critic: A_C = R_C - 2*acc_G = 2*(acc - acc_G) + len, not normalized", () => {
  // One critic's three samples of the same question, each in its own debate:
  //   s0: 120 tokens, right; generators [T, F, F] -> acc_G = 1/3
  //   s1:  80 tokens, right; generators [T, T, T] -> acc_G = 1
  //   s2: 200 tokens, wrong; generators [F, F, T] -> acc_G = 1/3
  // lengths: min 80, max 200, range 120; lambda = 0.5 - 40/120 = 1/6, 0.5, 0.5 - 120/120 = -0.5;
  // len = 1/6, 0.5, min(0, -0.5) = -0.5; R_C = 2 + 1/6, 2.5, -0.5; baselines 2/3, 2, 2/3;
  // A_C = 2*(1 - 1/3) + 1/6 = 3/2;  2*(1 - 1) + 0.5 = 0.5;  2*(0 - 1/3) - 0.5 = -7/6.
  const r = madaCriticAdvantages([
    { length: 120, correct: true, generatorAccuracy: generatorAccuracy([true, false, false]) },
    { length: 80, correct: true, generatorAccuracy: generatorAccuracy([true, true, true]) },
    { length: 200, correct: false, generatorAccuracy: generatorAccuracy([false, false, true]) },
  ]);
  close(r.lengths.rewards[0], 1 / 6);
  close(r.rewards[0], 13 / 6);
  assert.deepEqual(r.baselines, [2 / 3, 2, 2 / 3]);
  close(r.advantages[0], 1.5);
  close(r.advantages[1], 0.5);
  close(r.advantages[2], -7 / 6);
  // A critic that copies a unanimous right consensus gains only its length term.
  const copy = madaCriticAdvantages([{ length: 10, correct: true, generatorAccuracy: 1 }]);
  assert.deepEqual(copy.advantages, [0]);
});

Deno.test("MADA critic rejects an accuracy outside [0, 1]", () => {
  assert.throws(
    () => madaCriticAdvantages([{ length: 1, correct: true, generatorAccuracy: 1.5 }]),
    (e) => e instanceof RewardInputError && e.field === "critics[0].generatorAccuracy",
  );
});

Deno.test("MADA with config weights (accuracy 1, length 0.5) scales both parts and the baseline", () => {
  // The critic case above with a = 1, l = 0.5: A_C = (acc - acc_G) + 0.5 * len:
  //   s0: (1 - 1/3) + 0.5/6 = 0.75;  s1: 0 + 0.25 = 0.25;  s2: (0 - 1/3) - 0.25 = -7/12.
  const weights = { accuracy: 1, length: 0.5 };
  const r = madaCriticAdvantages([
    { length: 120, correct: true, generatorAccuracy: 1 / 3 },
    { length: 80, correct: true, generatorAccuracy: 1 },
    { length: 200, correct: false, generatorAccuracy: 1 / 3 },
  ], weights);
  close(r.advantages[0], 0.75);
  close(r.advantages[1], 0.25);
  close(r.advantages[2], -7 / 12);
  // Generators: lengths 100 T, 300 F -> len 0.5, -0.5 -> rewards 1 + 0.25 = 1.25, 0 - 0.25 = -0.25.
  const g = madaGeneratorAdvantages(
    [{ length: 100, correct: true }, { length: 300, correct: false }],
    { sigma: "population", eps: 1e-6 },
    weights,
  );
  assert.deepEqual(g.rewards, [1.25, -0.25]);
  assert.throws(
    () =>
      madaCriticAdvantages([{ length: 1, correct: true, generatorAccuracy: 0 }], {
        accuracy: NaN,
        length: 1,
      }),
    (e) => e instanceof RewardInputError && e.field === "weights.accuracy",
  );
});
