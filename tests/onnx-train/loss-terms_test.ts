/**
 * The loss terms veRL's actor adds to the clipped objective: the dual clip (clip_ratio_c), the
 * clamp of the k3 KL estimate, and the entropy bonus (entropy_coeff). Each is checked on one token
 * by hand (the numbers veRL gives), against the float64 reference, and its gradient against
 * central finite differences of that reference.
 */
import assert from "node:assert/strict";
import {
  batchFeeds,
  countLossTokens,
  lossDenominator,
} from "../../adapters/onnx/train-step/batch.ts";
import { buildTrainStep } from "../../adapters/onnx/train-step/graph.ts";
import { openTrainStep, type TrainStepHyper } from "../../adapters/onnx/train-step/runner.ts";
import { IO, type PolicyFn, type TrainStepConfig } from "../../adapters/onnx/train-step/spec.ts";
import { add, castTo, mul, scalar as constant, unsqueeze } from "../../adapters/onnx/mod.ts";
import { type HostTensor, hostTensor, scalar } from "../../adapters/onnx/runtime/mod.ts";
import { withRuntime } from "./backends.ts";
import { gradientsFromSums, zeroGradientSums } from "./gradient-sums.ts";
import { type PolicyHyper, policyObjective } from "./reference.ts";
import { rows, tinyBatch, tinyLogits, tinyParams, tinyPolicy, tinyWeights } from "./tiny-policy.ts";

function close(actual: number, expected: number, what: string, rel = 1e-5, abs = 1e-6) {
  assert.ok(
    Math.abs(actual - expected) <= abs + rel * Math.abs(expected),
    `${what}: got ${actual}, expected ${expected}`,
  );
}

// --- One token whose logits are the parameter: the numbers by hand. ---

/** Logits [batch, seq, 2] = the parameter `logits` [2] at every position. */
const logitsPolicy: PolicyFn = ({ params, tokens }) =>
  add(
    unsqueeze(mul(castTo(tokens, "float32"), constant(tokens.graph, 0, "float32")), [2]),
    params.logits,
  );

/**
 * One loss token predicting token 0 from logits [0, 0] (p = [0.5, 0.5]); `logRatio` is
 * logp - old logprob and `refGap` ref logprob - logp (the d of k3).
 */
function oneToken(advantage: number, logRatio: number, refGap: number) {
  const logp = Math.log(0.5);
  return {
    batch: 1,
    seq: 1,
    tokens: new Int32Array([0]),
    targets: new Int32Array([0]),
    attentionMask: new Float32Array([1]),
    lossMask: new Float32Array([1]),
    advantages: new Float32Array([advantage]),
    oldLogprobs: new Float32Array([logp - logRatio]),
    refLogprobs: new Float32Array([logp + refGap]),
  };
}

const oneTokenHyper: TrainStepHyper = {
  lr: 1e-3,
  clipLow: 0.2,
  clipHigh: 0.2,
  klCoef: 1,
  weightDecay: 0,
  maxGradNorm: Infinity,
  temperature: 1,
};

async function stepOneToken(terms: Partial<TrainStepConfig>, b: ReturnType<typeof oneToken>) {
  return await withRuntime("cpu", async (runtime) => {
    const runner = await openTrainStep({
      runtime,
      config: { policy: logitsPolicy, params: [{ name: "logits", shape: [2] }], ...terms },
      initial: { logits: hostTensor("float32", [2], new Float32Array([0, 0])) },
    });
    const m = await runner.step(b, oneTokenHyper);
    await runner.release();
    return m;
  });
}

Deno.test("dual clip: at A = -1 and ratio 4 the loss is capped at -A * 3 = 3 with no gradient", async () => {
  // d ratio / d logits = ratio * (onehot(0) - p) = 4 * [0.5, -0.5]: the norm is 4 / sqrt(2).
  const b = oneToken(-1, Math.log(4), 0);
  const plain = await stepOneToken({}, b);
  close(plain.loss, 4, "loss without a dual clip");
  close(plain.gradNorm, 4 / Math.SQRT2, "grad norm without a dual clip");
  assert.equal(plain.maxRatio, undefined, "no dual clip, no dual-clip metrics");
  const dual = await stepOneToken({ dualClip: 3 }, b);
  close(dual.loss, 3, "loss with clip_ratio_c 3");
  assert.equal(dual.gradNorm, 0);
  close(dual.maxRatio!, 4, "max ratio");
  assert.equal(dual.dualClipFraction, 1);
  // A positive advantage is untouched: max(-ratio, -1.2) = -1.2, the ordinary clip.
  const positive = await stepOneToken({ dualClip: 3 }, oneToken(1, Math.log(4), 0));
  close(positive.loss, -1.2, "loss at A = +1");
  assert.equal(positive.dualClipFraction, 0);
  // Below c the dual clip changes nothing: ratio 2 at A = -1 is loss 2, gradient 2 / sqrt(2).
  const below = await stepOneToken({ dualClip: 3 }, oneToken(-1, Math.log(2), 0));
  close(below.loss, 2, "loss at ratio 2");
  close(below.gradNorm, Math.SQRT2, "grad norm at ratio 2");
  assert.throws(() => buildTrainStep({ ...oneTokenConfig(), dualClip: 1 }, "fused"), /> 1/);
});

function oneTokenConfig(): TrainStepConfig {
  return { policy: logitsPolicy, params: [{ name: "logits", shape: [2] }] };
}

Deno.test("KL clamp: k3 at ref - logp = 3 is e^3 - 4 = 16.09 unclamped, 10 clamped with no gradient", async () => {
  // A = 0: only the KL term (coefficient 1). d k3 / d logits = (1 - e^d) (onehot(0) - p).
  const b = oneToken(0, 0, 3);
  const plain = await stepOneToken({ kl: "k3" }, b);
  close(plain.klLoss, Math.exp(3) - 4, "k3");
  close(plain.gradNorm, (Math.exp(3) - 1) / Math.SQRT2, "grad norm of k3");
  assert.equal(plain.klClampFraction, undefined, "no clamp, no clamp metric");
  const clamped = await stepOneToken({ kl: "k3", klClamp: 10 }, b);
  close(clamped.klLoss, 10, "clamped k3");
  assert.equal(clamped.gradNorm, 0);
  assert.equal(clamped.klClampFraction, 1);
  // Inside the bound the clamp changes nothing: d = 1 gives e - 2.
  const inside = await stepOneToken({ kl: "k3", klClamp: 10 }, oneToken(0, 0, 1));
  close(inside.klLoss, Math.E - 2, "k3 at d = 1");
  close(inside.gradNorm, (Math.E - 1) / Math.SQRT2, "grad norm of k3 at d = 1");
  assert.equal(inside.klClampFraction, 0);
  assert.throws(
    () => buildTrainStep({ ...oneTokenConfig(), kl: "k3", klClamp: 0 }, "fused"),
    /klClamp must be > 0/,
  );
});

Deno.test("entropy bonus on one token: loss -coeff * ln 2, gradient 0 at the uniform policy", async () => {
  // The uniform policy is entropy's maximum: its gradient vanishes there, the value is ln 2.
  const m = await stepOneToken({ entropyCoeff: 0.5 }, oneToken(0, 0, 0));
  close(m.loss, -0.5 * Math.LN2, "loss");
  close(m.entropy, Math.LN2, "entropy");
  close(m.gradNorm, 0, "grad norm", 0, 1e-7);
});

// --- The tiny policy: reference values and finite differences. ---

const sizes = { vocab: 7, dim: 4, hidden: 5, rank: 0 };
const batch = tinyBatch(sizes, 5, 6, 11);
const weights = tinyWeights(sizes, 3);
const AGG_CONSTANT = 8;

/** Settings at which every term is exercised on the tiny batch (asserted below). */
const cases: { name: string; terms: Partial<TrainStepConfig>; temperature: number }[] = [
  { name: "dual clip 1.1", terms: { dualClip: 1.1 }, temperature: 1 },
  { name: "k3 clamped to 0.03", terms: { kl: "k3", klClamp: 0.03 }, temperature: 1 },
  {
    name: "entropy 0.1, T 0.7, seq-mean-token-mean",
    terms: { entropyCoeff: 0.1, aggregation: "seq-mean-token-mean" },
    temperature: 0.7,
  },
  {
    name: "all three, seq-sum-const",
    terms: {
      dualClip: 1.1,
      kl: "k3",
      klClamp: 0.03,
      entropyCoeff: 0.1,
      aggregation: "seq-sum-const",
    },
    temperature: 1.3,
  },
];

const hyper = { clipLow: 0.2, clipHigh: 0.28, klCoef: 0.5 };

function tinyConfig(terms: Partial<TrainStepConfig>): TrainStepConfig {
  return {
    policy: tinyPolicy(sizes),
    params: tinyParams(sizes),
    aggregationConstant: AGG_CONSTANT,
    ...terms,
  };
}

function reference(terms: Partial<TrainStepConfig>, temperature: number, w = weights) {
  const data = Object.fromEntries(Object.entries(w).map(([k, v]) => [k, v.data]));
  const h: PolicyHyper = {
    ...hyper,
    kl: terms.kl ?? null,
    agg: terms.aggregation ?? "token-mean",
    aggConstant: AGG_CONSTANT,
    temperature,
    dualClip: terms.dualClip ?? undefined,
    klClamp: terms.klClamp ?? undefined,
    entropyCoeff: terms.entropyCoeff,
  };
  return policyObjective(tinyLogits(sizes, data, batch), {
    targets: rows(batch, batch.targets),
    lossMask: rows(batch, batch.lossMask),
    advantages: rows(batch, batch.advantages),
    oldLogprobs: rows(batch, batch.oldLogprobs),
    refLogprobs: rows(batch, batch.refLogprobs!),
  }, h);
}

for (const { name, terms, temperature } of cases) {
  Deno.test(`loss terms match the float64 reference, fused and micro-batched (${name})`, async () => {
    const expected = reference(terms, temperature);
    if (terms.dualClip) {
      assert.ok(expected.dualClipFraction > 0 && expected.dualClipFraction < 1, "dual clip bites");
    }
    if (terms.klClamp) {
      assert.ok(expected.klClampFraction > 0 && expected.klClampFraction < 1, "clamp bites");
    }
    if (terms.entropyCoeff) {
      const without = reference({ ...terms, entropyCoeff: 0 }, temperature);
      assert.ok(Math.abs(expected.loss - without.loss) > 1e-3, "entropy bonus counts");
    }
    await withRuntime("cpu", async (runtime) => {
      for (const microBatchSize of [undefined, 2]) {
        const runner = await openTrainStep({
          runtime,
          config: tinyConfig(terms),
          initial: weights,
          microBatchSize,
        });
        const m = await runner.step(batch, {
          ...hyper,
          lr: 0.01,
          weightDecay: 0,
          maxGradNorm: 1,
          temperature,
        });
        await runner.release();
        const what = (key: string) => `${key} (micro-batch ${microBatchSize ?? "none"})`;
        close(m.loss, expected.loss, what("loss"));
        close(m.policyLoss, expected.policyLoss, what("policy loss"));
        close(m.klLoss, expected.klLoss, what("kl loss"));
        close(m.entropy, expected.entropy, what("entropy"));
        if (terms.dualClip) {
          close(m.maxRatio!, expected.maxRatio, what("max ratio"));
          close(m.dualClipFraction!, expected.dualClipFraction, what("dual-clip fraction"));
        }
        if (terms.klClamp) {
          close(m.klClampFraction!, expected.klClampFraction, what("kl clamp fraction"));
        }
      }
    });
  });
}

Deno.test("loss-term gradients match central finite differences of the float64 objective", async () => {
  for (const { name, terms, temperature } of cases) {
    const cfg = tinyConfig(terms);
    const grads = await withRuntime("cpu", async (rt) => {
      const built = buildTrainStep(cfg, "accumulate");
      const session = await rt.load(built.model);
      const feeds: Record<string, HostTensor> = {
        ...batchFeeds(batch, {
          lossDenominator: lossDenominator(cfg.aggregation ?? "token-mean", batch, AGG_CONSTANT),
          tokenCount: countLossTokens(batch).tokens,
        }, cfg.kl != null),
        [IO.clipLow]: scalar(hyper.clipLow),
        [IO.clipHigh]: scalar(hyper.clipHigh),
        [IO.klCoef]: scalar(hyper.klCoef),
        [IO.temperature]: scalar(temperature),
        [IO.accumulate]: scalar(0),
      };
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
          return reference(terms, temperature, {
            ...weights,
            [p.name]: { ...weights[p.name], data: data as unknown as Float32Array },
          }).loss;
        };
        const fd = (shifted(h) - shifted(-h)) / (2 * h);
        close(grads[p.name][index], fd, `d loss / d ${p.name}[${index}] (${name})`, 2e-3, 2e-5);
      }
    }
  }
});
