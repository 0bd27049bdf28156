/**
 * Loss micro-batches (veRL's ppo_micro_batch_size_per_gpu): each run of `lossMicroBatch` rows is
 * aggregated alone and scaled by 1 / (rows // lossMicroBatch), as veRL's actor accumulates
 * gradients, for every aggregation; by hand, against the float64 reference, and the gradient
 * against finite differences. A runner's own micro-batches (memory) leave the result as it is.
 */
import assert from "node:assert/strict";
import { rowDenominators } from "../../adapters/onnx/train-step-batch.ts";
import { openTrainStep, type TrainStepHyper } from "../../adapters/onnx/train-step-runner.ts";
import type { LossAggregation, TrainStepConfig } from "../../adapters/onnx/train-step-spec.ts";
import { withRuntime } from "./backends.ts";
import { policyObjective } from "./reference.ts";
import { rows, tinyBatch, tinyLogits, tinyParams, tinyPolicy, tinyWeights } from "./tiny-policy.ts";

const sizes = { vocab: 7, dim: 4, hidden: 5, rank: 0 };
const batch = tinyBatch(sizes, 5, 6, 11);
const weights = tinyWeights(sizes, 3);
const AGG_CONSTANT = 8;
const MICRO = 2;
const hyper: TrainStepHyper = {
  lr: 0.01,
  clipLow: 0.2,
  clipHigh: 0.28,
  klCoef: 0,
  weightDecay: 0,
  maxGradNorm: Infinity,
  temperature: 1,
};

function close(actual: number, expected: number, what: string, rel = 1e-5, abs = 1e-6) {
  assert.ok(
    Math.abs(actual - expected) <= abs + rel * Math.abs(expected),
    `${what}: got ${actual}, expected ${expected}`,
  );
}

const config = (aggregation: LossAggregation): TrainStepConfig => ({
  policy: tinyPolicy(sizes),
  params: tinyParams(sizes),
  aggregation,
  aggregationConstant: AGG_CONSTANT,
  lossMicroBatch: MICRO,
});

Deno.test("loss micro-batches: each aggregation's loss at ratio 1, computed by hand", async () => {
  // Rows' loss tokens 4, 3, 2, 4, 3 and advantages 1, -2, 0.5, 3, -1; at ratio 1 a token's loss
  // is -A. Micro-batches of 2 rows: {0, 1}, {2, 3}, {4}; veRL scales each by 1 / (5 // 2) = 1/2.
  // Token sums -A * n: 4 and -6 | 1 and 12 | -3, negated: -4 6 | -1 -12 | 3.
  //   token-mean          (2/7 - 13/6 + 3/3) / 2                        = -37/84
  //   seq-mean-token-sum  (2/2 - 13/2 + 3/1) / 2                        = -1.25
  //   seq-mean-token-mean ((-1 + 2)/2 + (-0.5 - 3)/2 + 1/1) / 2         = -0.125
  //   seq-mean-token-sum-norm (2 - 13 + 3) / 8 / 2                      = -0.5
  //   seq-sum-const       (2/(2*8) - 13/(2*8) + 3/(1*8)) / 2            = -0.15625
  const expected: Record<LossAggregation, number> = {
    "token-mean": -37 / 84,
    "seq-mean-token-sum": -1.25,
    "seq-mean-token-mean": -0.125,
    "seq-mean-token-sum-norm": -0.5,
    "seq-sum-const": -0.15625,
  };
  const perRow = [1, -2, 0.5, 3, -1];
  const advantages = batch.advantages.map((_, i) => perRow[Math.floor(i / batch.seq)]);
  assert.deepEqual(
    [...rowDenominators("token-mean", batch, MICRO)],
    [7 * 2, 7 * 2, 6 * 2, 6 * 2, 3 * 2],
  );
  for (const aggregation of Object.keys(expected) as LossAggregation[]) {
    await withRuntime("cpu", async (runtime) => {
      const runner = await openTrainStep({
        runtime,
        config: config(aggregation),
        initial: weights,
      });
      const oldLogprobs = await runner.logprobs(batch, 1);
      const m = await runner.step({ ...batch, advantages, oldLogprobs }, hyper);
      close(m.loss, expected[aggregation], aggregation, 1e-6, 1e-7);
      await runner.release();
    });
  }
});

Deno.test("loss micro-batches: the float64 reference, whatever the runner's own micro-batches", async () => {
  for (const aggregation of ["token-mean", "seq-mean-token-mean"] as const) {
    const expected = policyObjective(
      tinyLogits(
        sizes,
        Object.fromEntries(Object.entries(weights).map(([k, v]) => [k, v.data])),
        batch,
      ),
      {
        targets: rows(batch, batch.targets),
        lossMask: rows(batch, batch.lossMask),
        advantages: rows(batch, batch.advantages),
        oldLogprobs: rows(batch, batch.oldLogprobs),
      },
      {
        ...hyper,
        kl: null,
        agg: aggregation,
        aggConstant: AGG_CONSTANT,
        microBatch: MICRO,
      },
    );
    await withRuntime("cpu", async (runtime) => {
      const norms: number[] = [];
      for (const microBatchSize of [undefined, 3]) {
        const runner = await openTrainStep({
          runtime,
          config: config(aggregation),
          initial: weights,
          microBatchSize,
        });
        const m = await runner.step(batch, hyper);
        close(m.loss, expected.loss, `${aggregation} (runner micro-batch ${microBatchSize})`);
        norms.push(m.gradNorm);
        await runner.release();
      }
      close(norms[1], norms[0], `${aggregation}: grad norm with the runner's micro-batches`);
    });
  }
});
