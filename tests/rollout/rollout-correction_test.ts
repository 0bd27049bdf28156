import assert from "node:assert/strict";
import { rolloutCorrection, tisWeight } from "../../engine/trainer/rollout-correction.ts";
import { policyBatch } from "../../engine/trainer/policy-batch.ts";

Deno.test("TIS weights on a hand-computed case: exp(trainer - server), truncated at the cap", () => {
  // trainer - server: +0.5 -> e^0.5 = 1.6487; +1 -> e = 2.718, truncated to 2; -0.25 -> 0.7788;
  // 0 -> 1; +30 -> clamped to +20 before exp, then truncated to 2.
  const trainer = [Float32Array.of(-1, -0.5), Float32Array.of(-2, -3, 0)];
  const server = [Float32Array.of(-1.5, -1.5), Float32Array.of(-1.75, -3, -30)];
  const { mismatch, weights } = rolloutCorrection(trainer, server, 2);
  const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-6, `${a} vs ${b}`);
  close(weights[0][0], 1.6487213);
  assert.equal(weights[0][1], 2);
  close(weights[1][0], 0.7788008);
  assert.equal(weights[1][1], 1);
  assert.equal(weights[1][2], 2);
  assert.equal(mismatch.tokens, 5);
  close(mismatch.meanAbs, (0.5 + 1 + 0.25 + 0 + 30) / 5);
  assert.equal(mismatch.maxAbs, 30);
  // Over 0.1 nats: 0.5, 1, 0.25, 30.
  close(mismatch.overThreshold, 4 / 5);
  // Truncated: +1 and +30 (log 2 = 0.693 < 1).
  close(mismatch.tisTruncated, 2 / 5);
  assert.equal(mismatch.tisCap, 2);
  assert.equal(tisWeight(0, 0, 2), 1);
});

Deno.test("TIS off (cap 0): every weight is 1, the mismatch is still measured", () => {
  const { mismatch, weights } = rolloutCorrection([Float32Array.of(-1)], [Float32Array.of(-3)], 0);
  assert.deepEqual([...weights[0]], [1]);
  assert.equal(mismatch.maxAbs, 2);
  assert.equal(mismatch.tisTruncated, 0);
});

Deno.test("a turn's advantage weights scale its response tokens' advantages in the batch", () => {
  const batch = policyBatch([{
    agent: "solver",
    promptTokens: Int32Array.of(1, 2),
    responseTokens: Int32Array.of(3, 4),
    logprobs: Float32Array.of(-1, -1),
    advantage: -0.5,
    advantageWeights: Float32Array.of(2, 0.25),
  }]);
  // Position 1 predicts token 3, position 2 token 4.
  assert.deepEqual([...batch.advantages], [0, -1, -0.125]);
  assert.deepEqual([...batch.lossMask], [0, 1, 1]);
});
