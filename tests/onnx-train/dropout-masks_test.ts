/**
 * Dropout masks through the train step, on the tiny policy's LoRA branch: the gradient under a
 * fixed mask against finite differences, masks filled per batch row (so micro-batching and
 * gradientNorm see the same ones), the all-ones mask as the plain forward, and the refusals.
 */
import assert from "node:assert/strict";
import {
  batchFeeds,
  countLossTokens,
  dropoutMaskFeeds,
  type DropoutMaskFill,
  lossDenominator,
} from "../../adapters/onnx/train-step/batch.ts";
import { buildTrainStep } from "../../adapters/onnx/train-step/graph.ts";
import { openTrainStep, type TrainStepHyper } from "../../adapters/onnx/train-step/runner.ts";
import { IO, type TrainStepConfig } from "../../adapters/onnx/train-step/spec.ts";
import { type HostTensor, scalar } from "../../adapters/onnx/runtime/mod.ts";
import { withRuntime } from "./backends.ts";
import { gradientsFromSums, zeroGradientSums } from "./gradient-sums.ts";
import { policyObjective } from "./reference.ts";
import {
  rows,
  stream,
  TINY_LORA_MASK,
  tinyBatch,
  tinyLogits,
  tinyParams,
  tinyPolicy,
  tinyWeights,
} from "./tiny-policy.ts";

const sizes = { vocab: 7, dim: 4, hidden: 5, rank: 2 };
const lora = ["lora_a", "lora_b"];
const plain: TrainStepConfig = {
  policy: tinyPolicy(sizes),
  params: tinyParams(sizes),
  trainable: lora,
  kl: "k3",
};
const withDropout: TrainStepConfig = {
  ...plain,
  dropoutMasks: [{ name: TINY_LORA_MASK, width: sizes.dim }],
};
// Uniform weights: lora_b is non-zero, so lora_a gets a gradient through the masked branch.
const weights = tinyWeights(sizes, 3);
const batch = tinyBatch(sizes, 5, 6, 11);
const hyper: TrainStepHyper = {
  lr: 0.05,
  clipLow: 0.2,
  clipHigh: 0.28,
  klCoef: 0.05,
  weightDecay: 0.1,
  maxGradNorm: 100,
  temperature: 0.8,
};
const RATE = 0.3;

/** Inverted dropout at RATE from a stream seeded by (seed, row): a pure function of the row. */
function keyedFill(seed: number): DropoutMaskFill {
  const kept = Math.fround(1 / (1 - RATE));
  return (_name, row, out) => {
    const next = stream(seed * 1000 + row + 1);
    for (let i = 0; i < out.length; i++) out[i] = next() < RATE ? 0 : kept;
  };
}

const allOnes: DropoutMaskFill = (_name, _row, out) => out.fill(1);

function close(actual: number, expected: number, what: string, rel = 1e-5, abs = 1e-6) {
  assert.ok(
    Math.abs(actual - expected) <= abs + rel * Math.abs(expected),
    `${what}: got ${actual}, expected ${expected}`,
  );
}

/** The whole batch's dropout mask [batch * seq * dim] as `fill` makes it. */
function wholeMask(fill: DropoutMaskFill): Float32Array {
  const spec = withDropout.dropoutMasks!;
  return dropoutMaskFeeds(spec, fill, batch, 0)[IO.dropoutMask(TINY_LORA_MASK)]
    .data as Float32Array;
}

function referenceLoss(w: Record<string, ArrayLike<number>>, mask: Float32Array): number {
  return policyObjective(tinyLogits(sizes, w, batch, mask), {
    targets: rows(batch, batch.targets),
    lossMask: rows(batch, batch.lossMask),
    advantages: rows(batch, batch.advantages),
    oldLogprobs: rows(batch, batch.oldLogprobs),
    refLogprobs: rows(batch, batch.refLogprobs!),
  }, {
    clipLow: hyper.clipLow,
    clipHigh: hyper.clipHigh,
    klCoef: hyper.klCoef,
    kl: "k3",
    agg: "token-mean",
    aggConstant: 1,
    temperature: hyper.temperature,
  }).loss;
}

Deno.test("the gradient through a dropout mask matches central finite differences of the float64 objective", async () => {
  const fill = keyedFill(5);
  const mask = wholeMask(fill);
  assert.ok(mask.some((m) => m === 0) && mask.some((m) => m > 1), "the mask drops and rescales");
  const grads = await withRuntime("cpu", async (rt) => {
    const built = buildTrainStep(withDropout, "accumulate");
    const session = await rt.load(built.model);
    const feeds: Record<string, HostTensor> = {
      ...batchFeeds(batch, {
        lossDenominator: lossDenominator("token-mean", batch),
        tokenCount: countLossTokens(batch).tokens,
      }, true),
      ...dropoutMaskFeeds(withDropout.dropoutMasks!, fill, batch, 0),
      [IO.clipLow]: scalar(hyper.clipLow),
      [IO.clipHigh]: scalar(hyper.clipHigh),
      [IO.klCoef]: scalar(hyper.klCoef),
      [IO.temperature]: scalar(hyper.temperature),
      [IO.accumulate]: scalar(0),
    };
    for (const p of plain.params) feeds[IO.param(p.name)] = weights[p.name];
    const out = (await session.run({ ...feeds, ...zeroGradientSums(built) })).host;
    await session.release();
    return gradientsFromSums(
      built,
      out,
      Object.fromEntries(plain.params.map((p) => [p.name, p.shape])),
    );
  });
  const h = 1e-5;
  for (const name of lora) {
    for (let index = 0; index < weights[name].data.length; index++) {
      const shifted = (delta: number) => {
        const data = Float64Array.from(weights[name].data);
        data[index] += delta;
        const w = Object.fromEntries(Object.entries(weights).map(([k, v]) => [k, v.data]));
        return referenceLoss({ ...w, [name]: data }, mask);
      };
      const fd = (shifted(h) - shifted(-h)) / (2 * h);
      close(grads[name][index], fd, `d loss / d ${name}[${index}]`, 2e-3, 2e-5);
    }
  }
});

Deno.test("masks are filled per batch row: micro-batched and parted steps equal the fused one", async () => {
  await withRuntime("cpu", async (runtime) => {
    const fused = await openTrainStep({ runtime, config: withDropout, initial: weights });
    const split = await openTrainStep({
      runtime,
      config: withDropout,
      initial: weights,
      microBatchSize: 2,
    });
    const filled: number[][] = [[], []];
    const recording = (into: number[], fill: DropoutMaskFill): DropoutMaskFill => (n, row, out) => {
      into.push(row);
      fill(n, row, out);
    };
    const everyRow = [0, 1, 2, 3, 4];
    const parted = await openTrainStep({ runtime, config: withDropout, initial: weights });
    const p = await parted.stepInParts(batch, hyper, [3, 2], keyedFill(5));
    const a = await fused.step(batch, hyper, recording(filled[0], keyedFill(5)));
    const b = await split.step(batch, hyper, recording(filled[1], keyedFill(5)));
    assert.deepEqual(filled, [everyRow, everyRow], "each whole-batch row filled once");
    assert.equal(b.microBatches, 3);
    close(p.gradNorm, a.gradNorm, "parted step under the step's masks");
    close(b.gradNorm, a.gradNorm, "micro-batched grad norm");
    close(b.loss, a.loss, "micro-batched loss");
    for (const name of lora) {
      const x = (await fused.readParam(name)).data;
      const y = (await split.readParam(name)).data;
      x.forEach((v, i) => close(y[i], v, `${name}[${i}]`));
    }
    await fused.release();
    await split.release();
    await parted.release();
  });
});

Deno.test("an all-ones mask is the plain forward bit for bit; logprobs never drop", async () => {
  await withRuntime("cpu", async (runtime) => {
    const masked = await openTrainStep({ runtime, config: withDropout, initial: weights });
    const unmasked = await openTrainStep({ runtime, config: plain, initial: weights });
    const dropped = await openTrainStep({ runtime, config: withDropout, initial: weights });
    assert.deepEqual(await masked.logprobs(batch, 0.8), await unmasked.logprobs(batch, 0.8));
    const reference = await unmasked.step(batch, hyper);
    assert.deepEqual(await masked.step(batch, hyper, allOnes), reference);
    for (const name of lora) {
      assert.deepEqual((await masked.readParam(name)).data, (await unmasked.readParam(name)).data);
    }
    // A real mask changes the loss and the update.
    assert.notEqual((await dropped.step(batch, hyper, keyedFill(5))).loss, reference.loss);
    assert.notDeepEqual(
      (await dropped.readParam("lora_a")).data,
      (await unmasked.readParam("lora_a")).data,
    );
    await masked.release();
    await unmasked.release();
    await dropped.release();
  });
});

Deno.test("a missing DropoutMaskFill, or one for a step without masks, is refused", async () => {
  await withRuntime("cpu", async (runtime) => {
    const masked = await openTrainStep({ runtime, config: withDropout, initial: weights });
    const unmasked = await openTrainStep({ runtime, config: plain, initial: weights });
    await assert.rejects(() => masked.step(batch, hyper), /has 1 dropout masks \(lora, \.\.\.\)/);
    await assert.rejects(
      () => masked.stepInParts(batch, hyper, [5]),
      /pass a DropoutMaskFill/,
    );
    await assert.rejects(() => unmasked.step(batch, hyper, allOnes), /has no dropoutMasks/);
    await masked.release();
    await unmasked.release();
  });
});
