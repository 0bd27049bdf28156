/**
 * Loss micro-batches (veRL's ppo_micro_batch_size_per_gpu): each run of `lossMicroBatch` rows is
 * aggregated alone and scaled by 1 / (rows // lossMicroBatch), as veRL's actor accumulates
 * gradients, for every aggregation; by hand, against the float64 reference, and the gradient
 * against finite differences. A runner's own micro-batches (memory) leave the result as it is.
 */
import assert from "node:assert/strict";
import {
  batchFeeds,
  countLossTokens,
  lossDenominator,
  rowDenominators,
} from "../../adapters/onnx/train-step/batch.ts";
import { buildTrainStep } from "../../adapters/onnx/train-step/graph.ts";
import { openTrainStep, type TrainStepHyper } from "../../adapters/onnx/train-step/runner.ts";
import {
  IO,
  type LossAggregation,
  type TrainStepConfig,
} from "../../adapters/onnx/train-step/spec.ts";
import { type HostTensor, scalar } from "../../adapters/onnx/runtime/mod.ts";
import { withRuntime } from "./backends.ts";
import { gradientsFromSums, zeroGradientSums } from "./gradient-sums.ts";
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

const config = (aggregation: LossAggregation, lossMicroBatch: number | undefined) => ({
  policy: tinyPolicy(sizes),
  params: tinyParams(sizes),
  aggregation,
  aggregationConstant: AGG_CONSTANT,
  lossMicroBatch,
} satisfies TrainStepConfig);

/** The float64 loss at `w`, aggregated per `microBatch` rows (undefined: the whole batch). */
function referenceLoss(
  aggregation: LossAggregation,
  microBatch: number | undefined,
  w = weights,
): number {
  const data = Object.fromEntries(Object.entries(w).map(([k, v]) => [k, v.data]));
  return policyObjective(tinyLogits(sizes, data, batch), {
    targets: rows(batch, batch.targets),
    lossMask: rows(batch, batch.lossMask),
    advantages: rows(batch, batch.advantages),
    oldLogprobs: rows(batch, batch.oldLogprobs),
  }, { ...hyper, kl: null, agg: aggregation, aggConstant: AGG_CONSTANT, microBatch }).loss;
}

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
        config: config(aggregation, MICRO),
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
    const expected = referenceLoss(aggregation, MICRO);
    await withRuntime("cpu", async (runtime) => {
      const norms: number[] = [];
      for (const microBatchSize of [undefined, 3]) {
        const runner = await openTrainStep({
          runtime,
          config: config(aggregation, MICRO),
          initial: weights,
          microBatchSize,
        });
        const m = await runner.step(batch, hyper);
        close(m.loss, expected, `${aggregation} (runner micro-batch ${microBatchSize})`);
        norms.push(m.gradNorm);
        await runner.release();
      }
      close(norms[1], norms[0], `${aggregation}: grad norm with the runner's micro-batches`);
    });
  }
});

Deno.test("veRL's aggregations, whole and per loss micro-batch: gradient against finite differences", async () => {
  const cases: [LossAggregation, number | undefined][] = [
    ["seq-mean-token-sum", undefined],
    ["seq-mean-token-sum-norm", undefined],
    ["token-mean", MICRO],
    ["seq-mean-token-sum", MICRO],
    ["seq-mean-token-mean", MICRO],
  ];
  for (const [aggregation, micro] of cases) {
    const cfg = config(aggregation, micro);
    const grads = await withRuntime("cpu", async (rt) => {
      const built = buildTrainStep(cfg, "accumulate");
      const session = await rt.load(built.model);
      const whole = {
        tokenCount: countLossTokens(batch).tokens,
        lossDenominator: lossDenominator(aggregation, batch, AGG_CONSTANT),
        rowDenominators: micro === undefined
          ? undefined
          : rowDenominators(aggregation, batch, micro, AGG_CONSTANT),
      };
      const feeds: Record<string, HostTensor> = {
        ...batchFeeds(batch, whole, false),
        [IO.clipLow]: scalar(hyper.clipLow),
        [IO.clipHigh]: scalar(hyper.clipHigh),
        [IO.klCoef]: scalar(0),
        [IO.temperature]: scalar(1),
        [IO.accumulate]: scalar(0),
      };
      // The graph reads one of the two denominators; feed only what it has.
      delete feeds[micro === undefined ? IO.rowDenominators : IO.lossDenominator];
      for (const p of cfg.params) feeds[IO.param(p.name)] = weights[p.name];
      const out = (await session.run({ ...feeds, ...zeroGradientSums(built) })).host;
      await session.release();
      return gradientsFromSums(
        built,
        out,
        Object.fromEntries(cfg.params.map((p) => [p.name, p.shape])),
      );
    });
    const h = 1e-5;
    for (const p of cfg.params) {
      for (const index of [0, 3, p.shape.reduce((a, b) => a * b, 1) - 1]) {
        const shifted = (delta: number) => {
          const data = Float64Array.from(weights[p.name].data);
          data[index] += delta;
          return referenceLoss(aggregation, micro, {
            ...weights,
            [p.name]: { ...weights[p.name], data: data as unknown as Float32Array },
          });
        };
        const fd = (shifted(h) - shifted(-h)) / (2 * h);
        close(
          grads[p.name][index],
          fd,
          `d loss / d ${p.name}[${index}] (${aggregation}, micro-batch ${micro ?? "none"})`,
          2e-3,
          2e-5,
        );
      }
    }
  }
});
