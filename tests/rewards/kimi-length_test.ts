import assert from "node:assert/strict";
import { kimiLengthRewards, RewardInputError } from "../../engine/rewards/mod.ts";

const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-12, `${a} vs ${b}`);

Deno.test("Kimi length reward by hand", () => {
  // lengths 100, 200, 300, 500: min 100, max 500, range 400.
  // lambda = 0.5 - (len - 100)/400 = 0.5, 0.25, 0, -0.5.
  // correct, correct, wrong, wrong -> 0.5, 0.25, min(0, 0) = 0, min(0, -0.5) = -0.5.
  const r = kimiLengthRewards([
    { length: 100, correct: true },
    { length: 200, correct: true },
    { length: 300, correct: false },
    { length: 500, correct: false },
  ]);
  assert.equal(r.minLength, 100);
  assert.equal(r.maxLength, 500);
  assert.deepEqual(r.lambdas, [0.5, 0.25, 0, -0.5]);
  assert.deepEqual(r.rewards, [0.5, 0.25, 0, -0.5]);
});

Deno.test("a short wrong answer earns nothing; a long right one is still penalized", () => {
  // lengths 100 (wrong), 500 (right): lambda 0.5 and -0.5; wrong -> min(0, 0.5) = 0; right -> -0.5.
  const r = kimiLengthRewards([{ length: 100, correct: false }, { length: 500, correct: true }]);
  assert.deepEqual(r.rewards, [0, -0.5]);
  // lengths 10, 40, 20 all right: range 30; lambda 0.5, 0.5 - 30/30 = -0.5, 0.5 - 10/30 = 1/6.
  const s = kimiLengthRewards([
    { length: 10, correct: true },
    { length: 40, correct: true },
    { length: 20, correct: true },
  ]);
  close(s.rewards[2], 1 / 6);
  assert.deepEqual(s.rewards.slice(0, 2), [0.5, -0.5]);
});

Deno.test("max == min (including a group of one): lambda 0 for everyone", () => {
  const r = kimiLengthRewards([{ length: 64, correct: true }, { length: 64, correct: false }]);
  assert.deepEqual(r.lambdas, [0, 0]);
  assert.deepEqual(r.rewards, [0, 0]);
  assert.deepEqual(kimiLengthRewards([{ length: 7, correct: true }]).rewards, [0]);
});

Deno.test("bad responses name the field", () => {
  assert.throws(() => kimiLengthRewards([]), RewardInputError);
  assert.throws(
    () => kimiLengthRewards([{ length: 3, correct: true }, { length: 2.5, correct: true }]),
    (e) => e instanceof RewardInputError && e.field === "responses[1].length",
  );
});
