/**
 * When a run evaluates (engine/config/evaluation-schedule.ts): after every `every_steps` and the
 * last step, and for a run of 0 steps once, its initial team, at step 0.
 */
import assert from "node:assert/strict";
import { evaluatesAfter, evaluationSteps, parseConfig } from "../../engine/config/mod.ts";
import { minimalConfig } from "./fixture.ts";

const config = (steps: number, every_steps: number) =>
  parseConfig({ ...minimalConfig(), steps, evaluation: { every_steps } });

Deno.test("evaluation steps: every k steps and the last, or step 0 of a run of 0 steps", () => {
  assert.deepEqual(evaluationSteps(config(10, 4)), [3, 7, 9]);
  assert.deepEqual(evaluationSteps(config(10, 0)), [9]);
  assert.deepEqual(evaluationSteps(config(1, 0)), [0]);
  // A run of 0 steps has no step to evaluate after, and evaluates its initial team once.
  const zero = config(0, 0);
  assert.equal(evaluatesAfter(zero, 0), false);
  assert.deepEqual(evaluationSteps(zero), [0]);
  assert.deepEqual(evaluationSteps(config(0, 5)), [0]);
});
