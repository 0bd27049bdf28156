import assert from "node:assert/strict";
import {
  batchFeeds,
  countLossTokens,
  lossDenominator,
} from "../../adapters/onnx/train-step/batch.ts";
import { buildTrainStep } from "../../adapters/onnx/train-step/graph.ts";
import { openTrainStep, type TrainStepHyper } from "../../adapters/onnx/train-step/runner.ts";
import {
  IO,
  type KlEstimator,
  type LossAggregation,
  type TrainObjective,
  type TrainStepConfig,
} from "../../adapters/onnx/train-step/spec.ts";
import { type HostTensor, scalar } from "../../adapters/onnx/runtime/mod.ts";
import { withRuntime } from "./backends.ts";
import { gradientsFromSums, zeroGradientSums } from "./gradient-sums.ts";
import { adamwStep, clipScale, globalNorm, logSoftmax, policyObjective } from "./reference.ts";
import { rows, tinyBatch, tinyLogits, tinyParams, tinyPolicy, tinyWeights } from "./tiny-policy.ts";

const sizes = { vocab: 7, dim: 4, hidden: 5, rank: 0 };
const batch = tinyBatch(sizes, 5, 6, 11);
const weights = tinyWeights(sizes, 3);
const hyper: TrainStepHyper = {
  lr: 0.01,
  clipLow: 0.2,
  clipHigh: 0.28,
  klCoef: 0.05,
  weightDecay: 0.1,
  maxGradNorm: 0.5,
  temperature: 1,
};
const AGG_CONSTANT = 8;
/** The hyperparameters at sampling temperature `temperature`. */
const at = (temperature: number): TrainStepHyper => ({ ...hyper, temperature });

function config(
  aggregation: LossAggregation,
  kl: KlEstimator | null,
  objective: TrainObjective = "clipped",
): TrainStepConfig {
  return {
    policy: tinyPolicy(sizes),
    params: tinyParams(sizes),
    objective,
    aggregation,
    aggregationConstant: AGG_CONSTANT,
    kl,
  };
}

function reference(
  aggregation: LossAggregation,
  kl: KlEstimator | null,
  temperature: number,
  w = weights,
  objective: TrainObjective = "clipped",
) {
  const data = Object.fromEntries(Object.entries(w).map(([k, v]) => [k, v.data]));
  return policyObjective(tinyLogits(sizes, data, batch), {
    targets: rows(batch, batch.targets),
    lossMask: rows(batch, batch.lossMask),
    advantages: rows(batch, batch.advantages),
    oldLogprobs: rows(batch, batch.oldLogprobs),
    refLogprobs: rows(batch, batch.refLogprobs!),
  }, {
    clipLow: hyper.clipLow,
    clipHigh: hyper.clipHigh,
    klCoef: hyper.klCoef,
    kl,
    agg: aggregation,
    aggConstant: AGG_CONSTANT,
    temperature,
    objective,
  });
}

function close(actual: number, expected: number, what: string, rel = 1e-5, abs = 1e-6) {
  assert.ok(
    Math.abs(actual - expected) <= abs + rel * Math.abs(expected),
    `${what}: got ${actual}, expected ${expected}`,
  );
}

/**
 * The accumulate graph's gradient (accumulate = 0 starts from zero) for `part` of the batch: a
 * copy with some rows' loss masked out, under the whole batch's denominators.
 */
async function graphGradients(cfg: TrainStepConfig, temperature: number, part = batch) {
  return await withRuntime("cpu", async (rt) => {
    const built = buildTrainStep(cfg, "accumulate");
    const session = await rt.load(built.model);
    const { tokens } = countLossTokens(batch);
    const feeds = {
      ...batchFeeds(part, {
        lossDenominator: lossDenominator(cfg.aggregation!, batch, AGG_CONSTANT),
        tokenCount: tokens,
      }, cfg.kl !== null),
      [IO.clipLow]: scalar(hyper.clipLow),
      [IO.clipHigh]: scalar(hyper.clipHigh),
      [IO.klCoef]: scalar(hyper.klCoef),
      [IO.temperature]: scalar(temperature),
      [IO.accumulate]: scalar(0),
    } as Record<string, HostTensor>;
    for (const p of cfg.params) feeds[IO.param(p.name)] = weights[p.name];
    const out = (await session.run({ ...feeds, ...zeroGradientSums(built) })).host;
    await session.release();
    return gradientsFromSums(
      built,
      out,
      Object.fromEntries(cfg.params.map((p) => [p.name, p.shape])),
    );
  });
}

// Aggregation, KL estimator, sampling temperature: ratio, KL and entropy are of softmax(logits/T).
const variants: [LossAggregation, KlEstimator | null, number][] = [
  ["token-mean", null, 1],
  ["token-mean", "k3", 0.7],
  ["seq-mean-token-mean", "k1", 1.3],
  ["seq-sum-const", "k3", 1],
];

for (const [aggregation, kl, temperature] of variants) {
  Deno.test(`loss and diagnostics match the float64 reference (${aggregation}, kl ${kl}, T ${temperature})`, async () => {
    const expected = reference(aggregation, kl, temperature);
    await withRuntime("cpu", async (runtime) => {
      const runner = await openTrainStep({
        runtime,
        config: config(aggregation, kl),
        initial: weights,
      });
      const m = await runner.step(batch, at(temperature));
      await runner.release();
      close(m.loss, expected.loss, "loss");
      close(m.policyLoss, expected.policyLoss, "policy loss");
      close(m.klLoss, expected.klLoss, "kl loss");
      close(m.clipFraction, expected.clipFraction, "clip fraction");
      close(m.approxKl, expected.approxKl, "approx kl");
      close(m.entropy, expected.entropy, "entropy");
      assert.ok(expected.clipFraction > 0 && expected.clipFraction < 1, "clipping is exercised");
      if (kl) assert.ok(Math.abs(expected.klLoss) > 1e-4, "kl term is exercised");
    });
  });
}

Deno.test("likelihood objective: -A log p with the same weights, no ratio, matching the float64 reference", async () => {
  for (const [aggregation, kl, temperature] of [variants[0], variants[2]]) {
    const expected = reference(aggregation, kl, temperature, weights, "likelihood");
    await withRuntime("cpu", async (runtime) => {
      const runner = await openTrainStep({
        runtime,
        config: config(aggregation, kl, "likelihood"),
        initial: weights,
      });
      const m = await runner.step(batch, at(temperature));
      await runner.release();
      close(m.loss, expected.loss, `loss (${aggregation})`);
      close(m.policyLoss, expected.policyLoss, `policy loss (${aggregation})`);
      close(m.klLoss, expected.klLoss, `kl loss (${aggregation})`);
      close(m.entropy, expected.entropy, `entropy (${aggregation})`);
      assert.equal(m.clipFraction, 0);
      assert.equal(m.approxKl, 0);
    });
  }
});

Deno.test("likelihood objective: the clipped step's update at ratio 1, old logprobs unread", async () => {
  await withRuntime("cpu", async (runtime) => {
    const clipped = await openTrainStep({
      runtime,
      config: config("token-mean", "k3"),
      initial: weights,
    });
    const likelihood = await openTrainStep({
      runtime,
      config: config("token-mean", "k3", "likelihood"),
      initial: weights,
    });
    const atRatioOne = { ...batch, oldLogprobs: await clipped.logprobs(batch, 1) };
    const garbage = { ...batch, oldLogprobs: batch.oldLogprobs.map(() => 1e6) };
    const a = await clipped.step(atRatioOne, hyper);
    const b = await likelihood.step(garbage, { ...hyper, clipLow: 9, clipHigh: 9 });
    assert.equal(a.clipFraction, 0, "ratio 1 is inside the clip range");
    close(b.gradNorm, a.gradNorm, "grad norm");
    close(b.klLoss, a.klLoss, "kl loss");
    for (const name of clipped.trainable) {
      const x = (await clipped.readParam(name)).data;
      const y = (await likelihood.readParam(name)).data;
      x.forEach((v, i) => close(y[i], v, `${name}[${i}] after the update`, 1e-5, 1e-7));
    }
    await clipped.release();
    await likelihood.release();
  });
});

Deno.test("train-step gradient matches central finite differences of the float64 objective", async () => {
  const cases: [LossAggregation, KlEstimator | null, number, TrainObjective][] = [
    ...[variants[1], variants[2], variants[3]].map(([a, k, t]) =>
      [a, k, t, "clipped"] as [LossAggregation, KlEstimator | null, number, TrainObjective]
    ),
    ["token-mean", null, 1, "likelihood"],
    ["seq-mean-token-mean", "k3", 0.7, "likelihood"],
  ];
  for (const [aggregation, kl, temperature, objective] of cases) {
    const grads = await graphGradients(config(aggregation, kl, objective), temperature);
    const h = 1e-5;
    for (const p of tinyParams(sizes)) {
      for (const index of [0, 3, p.shape.reduce((a, b) => a * b, 1) - 1]) {
        const shifted = (delta: number) => {
          const data = Float64Array.from(weights[p.name].data);
          data[index] += delta;
          return reference(aggregation, kl, temperature, {
            ...weights,
            [p.name]: { ...weights[p.name], data: data as unknown as Float32Array },
          }, objective).loss;
        };
        const fd = (shifted(h) - shifted(-h)) / (2 * h);
        close(
          grads[p.name][index],
          fd,
          `d loss / d ${p.name}[${index}] (${objective}, ${aggregation}, ${kl}, T ${temperature})`,
          2e-3,
          2e-5,
        );
      }
    }
  }
});

Deno.test("fused step applies clipped AdamW to the graph gradient", async () => {
  const cfg = config("token-mean", "k3");
  const grads = await graphGradients(cfg, hyper.temperature);
  const names = tinyParams(sizes).map((p) => p.name);
  const norm = globalNorm(names.map((n) => [...grads[n]]));
  // Half the norm, so that clipping is exercised.
  const clipped = { ...hyper, maxGradNorm: norm / 2 };
  const scale = clipScale(norm, clipped.maxGradNorm);
  await withRuntime("cpu", async (runtime) => {
    const runner = await openTrainStep({ runtime, config: cfg, initial: weights });
    const m = await runner.step(batch, clipped);
    close(m.gradNorm, norm, "grad norm");
    assert.equal(m.skipped, false);
    assert.equal(m.appliedSteps, 1);
    for (const name of names) {
      const p = [...weights[name].data];
      const zeros = p.map(() => 0);
      const expected = adamwStep(p, [...grads[name]].map((g) => g * scale), zeros, zeros, 1, {
        lr: hyper.lr,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weightDecay: hyper.weightDecay,
      }).param;
      const actual = (await runner.readParam(name)).data;
      expected.forEach((e, i) => close(actual[i], e, `${name}[${i}]`, 1e-5, 1e-6));
    }
    await runner.release();
  });
});

Deno.test("stepInParts: each row range's share of the gradient, its norm, and the step's update", async () => {
  const onlyRows = (keep: readonly number[]) => {
    const mask = (v: Float32Array) =>
      v.map((x, i) => keep.includes(Math.floor(i / batch.seq)) ? x : 0);
    return { ...batch, lossMask: mask(batch.lossMask), advantages: mask(batch.advantages) };
  };
  const names = tinyParams(sizes).map((p) => p.name);
  for (const [aggregation, kl, temperature] of variants) {
    const cfg = config(aggregation, kl);
    const hyper = at(temperature);
    // Rows 0-1 and 2-4: the two parts' gradients (whole-batch denominators) sum to the whole.
    const all = await graphGradients(cfg, temperature);
    const a = await graphGradients(cfg, temperature, onlyRows([0, 1]));
    const b = await graphGradients(cfg, temperature, onlyRows([2, 3, 4]));
    for (const n of names) {
      (all[n] as Float32Array).forEach((g, i) =>
        close(Number(a[n][i]) + Number(b[n][i]), g, `${n}[${i}] (${aggregation})`)
      );
    }
    await withRuntime("cpu", async (runtime) => {
      const parted = await openTrainStep({ runtime, config: cfg, initial: weights });
      const whole = await openTrainStep({ runtime, config: cfg, initial: weights });
      const norm = (g: typeof all) =>
        globalNorm(names.map((n) => Array.from(g[n] as Float32Array)));
      const m = await parted.stepInParts(batch, hyper, [2, 3]);
      close(m.partGradNorms[0], norm(a), `part a (${aggregation})`);
      close(m.partGradNorms[1], norm(b), `part b (${aggregation})`);
      const w = await whole.step(batch, hyper);
      close(m.gradNorm, w.gradNorm, `whole (${aggregation})`);
      close(m.loss, w.loss, `loss (${aggregation})`);
      assert.equal(m.microBatches, 2);
      for (const n of names) {
        const x = (await parted.readParam(n)).data;
        const y = (await whole.readParam(n)).data;
        x.forEach((v, i) => close(v, y[i], `${n}[${i}] after the update (${aggregation})`));
      }
      await assert.rejects(() => parted.stepInParts(batch, hyper, [2, 2]), /must cover it/);
      await parted.release();
      await whole.release();
    });
  }
});

Deno.test("micro-batches with gradient accumulation give the same updates as one batch", async () => {
  for (const [aggregation, kl, temperature] of variants) {
    const cfg = config(aggregation, kl);
    const hyper = at(temperature);
    await withRuntime("cpu", async (runtime) => {
      const whole = await openTrainStep({ runtime, config: cfg, initial: weights });
      const split = await openTrainStep({
        runtime,
        config: cfg,
        initial: weights,
        microBatchSize: 2,
      });
      for (let step = 0; step < 3; step++) {
        const a = await whole.step(batch, hyper);
        const b = await split.step(batch, hyper);
        assert.equal(b.microBatches, 3);
        for (
          const key of [
            "loss",
            "policyLoss",
            "klLoss",
            "clipFraction",
            "approxKl",
            "entropy",
            "gradNorm",
          ] as const
        ) {
          close(b[key], a[key], `${key} at step ${step} (${aggregation})`, 1e-5, 1e-6);
        }
      }
      for (const name of whole.trainable) {
        const a = (await whole.readParam(name)).data;
        const b = (await split.readParam(name)).data;
        a.forEach((x, i) =>
          close(b[i], x, `${name}[${i}] after 3 steps (${aggregation})`, 1e-5, 1e-6)
        );
      }
      await whole.release();
      await split.release();
    });
  }
});

Deno.test("a non-finite advantage skips the step and leaves every parameter unchanged", async () => {
  const bad = { ...batch, advantages: batch.advantages.map((a, i) => (i === 9 ? NaN : a)) };
  assert.equal(bad.lossMask[9], 1, "the NaN sits on a loss token");
  await withRuntime("cpu", async (runtime) => {
    const runner = await openTrainStep({
      runtime,
      config: config("token-mean", null),
      initial: weights,
    });
    const m = await runner.step(bad, hyper);
    assert.equal(m.skipped, true);
    assert.equal(m.appliedSteps, 0);
    assert.ok(Number.isNaN(m.gradNorm));
    for (const name of runner.trainable) {
      assert.deepEqual([...(await runner.readParam(name)).data], [...weights[name].data]);
      assert.ok((await runner.state.read(IO.adamM(name))).data.every((x) => x === 0));
    }
    const ok = await runner.step(batch, hyper);
    assert.equal(ok.skipped, false);
    assert.equal(ok.appliedSteps, 1);
    await runner.release();
  });
});

Deno.test("temperature 0 (greedy sampling) takes logprobs at T = 1, and a negative one is refused", async () => {
  await withRuntime("cpu", async (runtime) => {
    const cfg = config("token-mean", "k3");
    const greedy = await openTrainStep({ runtime, config: cfg, initial: weights });
    const plain = await openTrainStep({ runtime, config: cfg, initial: weights });
    assert.deepEqual(await greedy.logprobs(batch, 0), await plain.logprobs(batch, 1));
    assert.deepEqual(await greedy.step(batch, at(0)), await plain.step(batch, at(1)));
    await assert.rejects(() => greedy.step(batch, at(-1)), /temperature must be a finite number/);
    await greedy.release();
    await plain.release();
  });
});

Deno.test("logprobs are the step's own forward: fed back as old logprobs, the first ratio is exactly 1", async () => {
  const data = Object.fromEntries(Object.entries(weights).map(([k, v]) => [k, v.data]));
  const logits = tinyLogits(sizes, data, batch);
  for (const microBatchSize of [undefined, 2]) {
    for (const temperature of [1, 0.7]) {
      await withRuntime("cpu", async (runtime) => {
        const cfg = config("token-mean", "k3");
        const runner = await openTrainStep({
          runtime,
          config: cfg,
          initial: weights,
          microBatchSize,
        });
        const current = await runner.logprobs(batch, temperature);
        // Against the float64 reference of log softmax(logits / T): float32 rounding only.
        for (let i = 0; i < batch.batch * batch.seq; i++) {
          const row = logits[Math.floor(i / batch.seq)][i % batch.seq].map((x) => x / temperature);
          close(current[i], logSoftmax(row)[batch.targets[i]], `logprob ${i} (T ${temperature})`);
        }
        // Exact, not within a tolerance: the logprobs graph is the step's forward, node for node
        // (policy, logits / T, x - ReduceLogSumExp(x), target pick) on the same micro-batch rows,
        // and the cpu EP computes a node's output bit-identically from identical inputs, so
        // logp - old is 0.0 and exp(0) = 1 exactly, which no clip range excludes.
        const first = await runner.step({ ...batch, oldLogprobs: current }, at(temperature));
        assert.equal(first.approxKl, 0, `approx KL (micro ${microBatchSize}, T ${temperature})`);
        assert.equal(first.clipFraction, 0);
        // The next update on the same old logprobs sees the moved policy.
        const second = await runner.step({ ...batch, oldLogprobs: current }, at(temperature));
        assert.notEqual(second.approxKl, 0);
        await runner.release();
      });
    }
  }
});

Deno.test("each aggregation's loss at ratio 1, computed by hand", async () => {
  // Per-row advantages; loss tokens per row are 4, 3, 2, 4, 3 (16 in all; see tinyBatch).
  const perRow = [1, -2, 0.5, 3, -1];
  const advantages = batch.advantages.map((_, i) => perRow[Math.floor(i / batch.seq)]);
  // At ratio 1 each loss token's clipped objective is -A, whatever the clip range:
  //   token-mean          -(1*4 - 2*3 + 0.5*2 + 3*4 - 1*3) / 16      = -8 / 16    = -0.5
  //   seq-mean-token-mean -(1 - 2 + 0.5 + 3 - 1) / 5 sequences       = -1.5 / 5   = -0.3
  //   seq-sum-const       -(4 - 6 + 1 + 12 - 3) / (5 sequences * 8)  = -8 / 40    = -0.2
  //   seq-mean-token-sum  -(4 - 6 + 1 + 12 - 3) / 5 sequences        = -8 / 5     = -1.6
  //   seq-mean-token-sum-norm -(4 - 6 + 1 + 12 - 3) / 8              = -8 / 8     = -1
  const expected: Record<LossAggregation, number> = {
    "token-mean": -0.5,
    "seq-mean-token-mean": -0.3,
    "seq-sum-const": -0.2,
    "seq-mean-token-sum": -1.6,
    "seq-mean-token-sum-norm": -1,
  };
  assert.equal(lossDenominator("seq-sum-const", batch, AGG_CONSTANT), 40);
  assert.throws(() => lossDenominator("seq-sum-const", batch), /aggregationConstant > 0/);
  for (const aggregation of Object.keys(expected) as LossAggregation[]) {
    await withRuntime("cpu", async (runtime) => {
      const runner = await openTrainStep({
        runtime,
        config: config(aggregation, null),
        initial: weights,
      });
      const oldLogprobs = await runner.logprobs(batch, 1);
      const m = await runner.step({ ...batch, advantages, oldLogprobs }, at(1));
      close(m.loss, expected[aggregation], aggregation, 1e-6, 1e-7);
      await runner.release();
    });
  }
});
