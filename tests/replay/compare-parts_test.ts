import assert from "node:assert/strict";
import { fieldDiff, numericDrift } from "../../engine/replay/mod.ts";
import type { NewEvent } from "../../events/mod.ts";

Deno.test("fieldDiff names the differing paths and summarises typed arrays", () => {
  assert.deepEqual(fieldDiff({ a: 1, b: { c: "x" } }, { a: 1, b: { c: "x" } }), []);
  const d = fieldDiff(
    { losses: { total: 1, kl: 0 }, tokens: new Int32Array([1, 2, 3]), tag: "a" },
    { losses: { total: 1.5, kl: 0 }, tokens: new Int32Array([1, 9, 3]), tag: "a" },
  );
  assert.deepEqual(d.map((f) => f.path), ["losses.total", "tokens"]);
  assert.equal(d[0].recorded, "1");
  assert.equal(d[0].replayed, "1.5");
  assert.equal(d[1].recorded, "3 values, [1] = 2");
  assert.equal(d[1].replayed, "3 values, [1] = 9; 1 of 3 differ, max |diff| 7");
  // A missing key and a different array length are differences too; NaN equals NaN.
  assert.deepEqual(fieldDiff({ x: [1, 2] }, { x: [1] }).map((f) => f.path), ["x"]);
  assert.deepEqual(fieldDiff({ y: 1 }, {}).map((f) => f.path), ["y"]);
  assert.deepEqual(fieldDiff({ z: NaN }, { z: NaN }), []);
});

function turn(tokens: number[], logprobs: number[]): NewEvent {
  return {
    type: "turn.generated",
    data: {
      step: 0,
      phase: "rollout",
      trajectory: "rollout-s0-p0-k0",
      prompt: 0,
      sample: 0,
      turn: 1,
      agent: "solver",
      role: "solver",
      workerGroup: "solver",
      promptTokens: new Int32Array([5]),
      responseTokens: new Int32Array(tokens),
      logprobs: new Float32Array(logprobs),
      finishReason: "length",
      parsedAnswer: null,
      correct: null,
      text: "",
    },
  };
}

Deno.test("numericDrift measures logprobs while tokens agree and finds where they part", () => {
  const drift = numericDrift({ rtol: 1e-3, atol: 1e-4 });
  // Tokens agree on [0, 1], part at index 2: only the first two logprobs are comparable.
  drift.add("t1", turn([4, 7, 8], [-1, -2, -3]), turn([4, 7, 9], [-1.5, -2, -30]));
  const r = drift.report();
  assert.equal(r.logprobs.compared, 2);
  assert.equal(r.logprobs.maxAbs, 0.5);
  assert.equal(r.logprobs.maxRel, 0.5 / 1.5);
  // |-1.5 - -1| = 0.5 > 1e-4 + 1e-3 * 1
  assert.equal(r.logprobs.outside, 1);
  assert.deepEqual(
    { index: r.firstTokenDivergence?.index, a: r.firstTokenDivergence?.recorded },
    { index: 2, a: 8 },
  );
  assert.equal(r.firstTokenDivergence?.replayed, 9);
  assert.equal(r.losses.compared, 0);
});
