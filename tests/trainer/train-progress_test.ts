/**
 * The training progress line: steps by their number in the log, a rate without start-up, and an
 * ETA that counts the evaluations still ahead (it once showed 13 s for a run that took 34 s, its
 * final evaluation left out). The clock's numbers by hand; the line through the real CLI.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { TrainClock } from "../../engine/trainer/train-progress.ts";
import type { TrainPlan, TrainProgress } from "../../engine/trainer/train-loop.ts";
import { runCli } from "../support/run-cli.ts";
import { openStore } from "../../events/mod.ts";

// Three steps of 4 episodes; one evaluation of 8 episodes, after the last step.
const plan: TrainPlan = { episodesPerStep: 4, episodesPerEvaluation: 8, evaluationSteps: [2] };
const at = (step: number, stage: TrainProgress["stage"]): TrainProgress => ({
  step,
  steps: 3,
  stage,
  plan,
});

Deno.test("train clock: step and evaluation times measured apart, evaluations in the ETA", () => {
  const clock = new TrainClock();
  // Before a step has finished nothing is known: rate 0, ETA unknown.
  const first = clock.observe(at(0, "rollout"), 10);
  assert.equal(first.rate, 0);
  assert.ok(Number.isNaN(first.etaSeconds));
  clock.observe(at(0, "update"), 12); // rollout: 2 s for 4 episodes, 0.5 s each
  // Step 0 took 4 s: two steps left (8 s) and the evaluation's 8 episodes at 0.5 s (4 s).
  assert.deepEqual(clock.observe(at(0, "done"), 14), {
    rate: 0.25,
    etaSeconds: 12,
    etaDetail: "steps 8s + 1 evaluation 4s",
  });
  clock.observe(at(1, "rollout"), 14);
  // Mid-step: 1 s into step 1 of a 4 s mean, one step after it, rollouts 0.375 s per episode.
  assert.deepEqual(clock.observe(at(1, "update"), 15), {
    rate: 0.25,
    etaSeconds: 3 + 4 + 3,
    etaDetail: "steps 7s + 1 evaluation 3s",
  });
  assert.deepEqual(clock.observe(at(1, "done"), 16), {
    rate: 1 / 3,
    etaSeconds: 3 + 3,
    etaDetail: "steps 3s + 1 evaluation 3s",
  });
  clock.observe(at(2, "rollout"), 16);
  clock.observe(at(2, "update"), 17);
  // The evaluation under way: no training left, 8 episodes at (0.5 + 0.25 + 0.25) / 3 s.
  const evaluating = clock.observe(at(2, "evaluation"), 18);
  assert.equal(evaluating.etaSeconds, 8 / 3);
  assert.equal(evaluating.etaDetail, "steps 0s + this evaluation 3s");
  // The run's end: step 2's training part was 2 s, the evaluation 7 s; nothing left.
  assert.deepEqual(clock.observe(at(2, "done"), 25), {
    rate: 1 / ((4 + 2 + 2) / 3),
    etaSeconds: 0,
  });
});

Deno.test("train clock: a measured evaluation replaces the estimate from rollouts", () => {
  const clock = new TrainClock();
  const everyStep: TrainPlan = { ...plan, evaluationSteps: [0, 1, 2] };
  const step = (s: number, stage: TrainProgress["stage"]) => ({ ...at(s, stage), plan: everyStep });
  clock.observe(step(0, "rollout"), 0);
  clock.observe(step(0, "update"), 1);
  clock.observe(step(0, "evaluation"), 2);
  // Step 0: 2 s of training, 10 s of evaluation; two of each left.
  assert.deepEqual(clock.observe(step(0, "done"), 12), {
    rate: 0.5,
    etaSeconds: 2 * 2 + 2 * 10,
    etaDetail: "steps 4s + 2 evaluations 20s",
  });
});

Deno.test("train clock: a run of 0 steps, its evaluation of the initial team only", () => {
  const clock = new TrainClock();
  const initialTeam: TrainProgress = {
    step: 0,
    steps: 0,
    stage: "evaluation",
    plan: { ...plan, evaluationSteps: [0] },
  };
  // No step to measure: no training left, the evaluation's time unknown (no rollout seen yet).
  const evaluating = clock.observe(initialTeam, 3);
  assert.equal(evaluating.rate, 0);
  assert.ok(Number.isNaN(evaluating.etaSeconds));
  assert.equal(evaluating.etaDetail, "steps 0s + this evaluation ?");
  // Its end: nothing left, and no step counted in the rate.
  assert.deepEqual(clock.observe({ ...initialTeam, stage: "done" }, 10), {
    rate: 0,
    etaSeconds: 0,
  });
});

Deno.test({
  name: "train's progress line: the step's number in the log, the final evaluation in the ETA",
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "polyrl-progress-" });
    const store = join(dir, "events.sqlite");
    const r = await runCli(
      "engine/cli/train.ts",
      ...["--preset", "smoke", "--steps", "2", "--device", "cpu", "--store", store],
    );
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stderr.split("\n").filter((l) => l.startsWith("train "));
    assert.equal(lines.length, 2, r.stderr);
    // smoke evaluates after its last step only: after step 0, one evaluation is still ahead.
    assert.match(
      lines[0],
      /^train 1\/2 \[step 0 done\] [\d.]+ steps\/s elapsed \d+s ETA \d+s \(steps \d+s \+ 1 evaluation \d+s\) accuracy=/,
    );
    assert.match(
      lines[1],
      /^train 2\/2 \[step 1 done\] [\d.]+ steps\/s elapsed \d+s ETA 0s accuracy=/,
    );
    // The run names its code's catalogue generation, which replay reads (newer-event-types_test).
    {
      await using s = await openStore(store, { readOnly: true });
      const runId = r.stdout.match(/^run id: (\S+)$/m)![1];
      const [started] = await Array.fromAsync(s.readStream(runId));
      assert.equal((started.data as { catalogueGeneration?: number }).catalogueGeneration, 1);
    }
    await Deno.remove(dir, { recursive: true });
  },
});
