import assert from "node:assert/strict";
import {
  actionReward,
  placeRewards,
  RewardInputError,
  weightedReward,
} from "../../engine/rewards/mod.ts";

Deno.test("Dr. MAS placement: R on the last token of every output, minus the invalid penalty", () => {
  // R = 1, penalty 0.1: valid outputs carry 1, the invalid one 1 - 0.1 = 0.9; other tokens 0.
  const placed = placeRewards(
    [{ tokens: 3, valid: true }, { tokens: 2, valid: false }, { tokens: 1, valid: true }],
    1,
    0.1,
  );
  assert.deepEqual(placed.map((p) => p.reward), [1, 0.9, 1]);
  assert.deepEqual([...placed[0].tokenRewards], [0, 0, 1]);
  assert.deepEqual([...placed[1].tokenRewards], [0, Math.fround(0.9)]);
  assert.deepEqual([...placed[2].tokenRewards], [1]);
  // A failed trajectory with an invalid action: 0 - 0.1 = -0.1.
  assert.equal(actionReward(0, false, 0.1), -0.1);
  assert.equal(actionReward(0, true, 0.1), 0);
});

Deno.test("placement rejects empty outputs and negative penalties", () => {
  assert.throws(
    () => placeRewards([{ tokens: 0, valid: true }], 1, 0),
    (e) => e instanceof RewardInputError && e.field === "outputs[0].tokens",
  );
  assert.throws(
    () => actionReward(1, true, -0.5),
    (e) => e instanceof RewardInputError && e.field === "invalidActionPenalty",
  );
});

Deno.test("weighted reward sums weight * component; unweighted components are ignored", () => {
  // 2 * 1 + 1 * 0.25 = 2.25; format has no weight.
  assert.equal(
    weightedReward({ accuracy: 1, format: -1, length: 0.25 }, { accuracy: 2, length: 1 }),
    2.25,
  );
  assert.throws(
    () => weightedReward({ accuracy: 1 }, { acuracy: 1 }),
    (e) =>
      e instanceof RewardInputError && e.field === "weights.acuracy" && /accuracy/.test(e.message),
  );
});
