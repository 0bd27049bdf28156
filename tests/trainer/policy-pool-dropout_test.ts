/**
 * The worker-group policy's training knobs, through openPolicyPool on the tiny fixture model (cpu
 * backend): LoRA dropout keyed by (seed, wg, step, update, row, module), applied in the update
 * only; logprobs at the current weights as the first update's old logprobs (ratio exactly 1);
 * the sampling temperature in every logprob; the loss aggregation passed to the train step.
 */
import assert from "node:assert/strict";
import type { PolicyBatch } from "../../adapters/onnx/train-step/batch.ts";
import type { TrainStepHyper } from "../../adapters/onnx/train-step/runner.ts";
import { openRuntime, type Runtime } from "../../adapters/onnx/runtime/mod.ts";
import type { WorkerGroup } from "../../engine/config/mod.ts";
import { policyBatch, type TrainingTurn } from "../../engine/trainer/policy-batch.ts";
import {
  type GroupPolicy,
  loraDropoutFill,
  openPolicyPool,
  PolicyPoolError,
  type PolicyPoolOptions,
} from "../../engine/trainer/rollout/policy-pool.ts";
import { writeTinyCheckpoint } from "../hf/tiny-checkpoint.ts";
import { stream } from "../onnx-train/tiny-policy.ts";

const TEMPERATURE = 0.7;
const hyper: TrainStepHyper = {
  lr: 1e-2,
  clipLow: 0.2,
  clipHigh: 0.2,
  klCoef: 0.05,
  weightDecay: 0,
  maxGradNorm: 1e3,
  temperature: TEMPERATURE,
};
const options: PolicyPoolOptions = {
  seed: 7,
  klCoef: hyper.klCoef,
  aggregation: "token-mean",
  aggregationConstant: 8,
};

function group(id: string, trainable: WorkerGroup["trainable"], model: string): WorkerGroup {
  return {
    id,
    model,
    trainable,
    optimizer: {
      lr: hyper.lr,
      weight_decay: 0,
      beta1: 0.9,
      beta2: 0.999,
      eps: 1e-8,
      max_grad_norm: 1,
      warmup_ratio: 0,
    },
    agents: [id],
  };
}

const lora = (dropout: number): WorkerGroup["trainable"] => ({
  kind: "lora",
  rank: 2,
  alpha: 4,
  dropout,
  targets: ["q_proj", "v_proj", "down_proj"],
});

/** Four turns of random tokens (ragged), advantages of both signs, logprobs filled in later. */
function turns(vocab: number): TrainingTurn[] {
  const next = stream(3);
  const ids = (n: number) => Int32Array.from({ length: n }, () => Math.floor(next() * vocab));
  return [[3, 4, 1], [2, 5, -1], [4, 2, 0.5], [1, 6, -0.5]].map((
    [prompt, response, advantage],
  ) => ({
    agent: "solver",
    promptTokens: ids(prompt),
    responseTokens: ids(response),
    logprobs: new Float32Array(response),
    advantage,
  }));
}

/** A batch whose old and reference logprobs are the policy's own at TEMPERATURE. */
async function batchFor(policy: GroupPolicy): Promise<PolicyBatch> {
  const plain = policyBatch(turns(policy.spec.config.vocabSize));
  return {
    ...plain,
    oldLogprobs: await policy.logprobs(plain, TEMPERATURE),
    refLogprobs: await policy.referenceLogprobs(plain, TEMPERATURE),
  };
}

async function withPools(
  body: (pools: { dropout: GroupPolicy; plain: GroupPolicy; frozen: GroupPolicy }) => Promise<void>,
  extra: Partial<PolicyPoolOptions> = {},
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-pool-" });
  let runtime: Runtime | null = null;
  const opened: { release(): Promise<void> }[] = [];
  try {
    await writeTinyCheckpoint(dir);
    runtime = await openRuntime("cpu", { threads: 2 });
    // The same wg id and seed: both groups start from the same adapter.
    const a = await openPolicyPool(runtime, [group("solver", lora(0.25), dir)], {
      ...options,
      ...extra,
    });
    opened.push(a);
    const b = await openPolicyPool(runtime, [
      group("solver", lora(0), dir),
      group("judge", { kind: "frozen" }, dir),
    ], { ...options, ...extra });
    opened.push(b);
    await body({
      dropout: a.groups.get("solver")!,
      plain: b.groups.get("solver")!,
      frozen: b.groups.get("judge")!,
    });
  } finally {
    for (const pool of opened) await pool.release();
    await runtime?.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("loraDropoutFill: a pure function of (seed, wg, step, update, row, module), inverted dropout at the rate", () => {
  const rate = 0.25;
  const fill = (seed: number, wg: string, step: number, update: number, row: number, m: string) => {
    const out = new Float32Array(4099); // not a multiple of the 4 words of a Philox block
    loraDropoutFill(seed, wg, rate, { step, update })(m, row, out);
    return out;
  };
  const base = fill(7, "solver", 3, 1, 2, "model.layers.0.self_attn.q_proj");
  // Other rows and modules drawn first change nothing: no hidden state.
  fill(7, "solver", 3, 1, 0, "model.layers.1.mlp.down_proj");
  assert.deepEqual(fill(7, "solver", 3, 1, 2, "model.layers.0.self_attn.q_proj"), base);
  for (
    const other of [
      fill(8, "solver", 3, 1, 2, "model.layers.0.self_attn.q_proj"),
      fill(7, "critic", 3, 1, 2, "model.layers.0.self_attn.q_proj"),
      fill(7, "solver", 4, 1, 2, "model.layers.0.self_attn.q_proj"),
      fill(7, "solver", 3, 0, 2, "model.layers.0.self_attn.q_proj"),
      fill(7, "solver", 3, 1, 3, "model.layers.0.self_attn.q_proj"),
      fill(7, "solver", 3, 1, 2, "model.layers.0.self_attn.v_proj"),
    ]
  ) assert.notDeepEqual(other, base);
  const kept = Math.fround(1 / (1 - rate));
  assert.ok(base.every((x) => x === 0 || x === kept), "values are 0 or 1 / (1 - p)");
  // 4099 Bernoulli(0.25) draws: the dropped share has sd 0.0068; 4 sd either side.
  const dropped = base.filter((x) => x === 0).length / base.length;
  assert.ok(Math.abs(dropped - rate) < 0.028, `dropped share ${dropped}`);
});

Deno.test("LoRA dropout: recorded rate; an update differs from one without; same key bit-identical, another key not", async () => {
  await withPools(async ({ dropout, plain, frozen }) => {
    assert.equal(dropout.loraDropout, 0.25);
    assert.equal(plain.loraDropout, 0);
    assert.equal(frozen.loraDropout, 0);
    assert.equal(await dropout.parameterHash(), await plain.parameterHash(), "same start");
    const batch = await batchFor(plain);
    const start = {
      params: await dropout.checkpoint(),
      moments: await dropout.optimizerCheckpoint(),
    };
    const run = async (key: { step: number; update: number }) => {
      await dropout.restore(start.params, start.moments!);
      // Two updates, so that B is non-zero and A's gradient passes through the masks too.
      const first = await dropout.update(batch, hyper, key);
      const second = await dropout.update(batch, hyper, { ...key, update: key.update + 1 });
      return { metrics: [first, second], hash: await dropout.parameterHash() };
    };
    const key = { step: 3, update: 0 };
    const once = await run(key);
    const again = await run(key);
    assert.deepEqual(again, once, "a rerun under the same key is bit-identical");
    assert.notEqual((await run({ step: 4, update: 0 })).hash, once.hash, "another step");
    assert.notEqual((await run({ step: 3, update: 2 })).hash, once.hash, "another update");
    await plain.update(batch, hyper, key);
    await plain.update(batch, hyper, { ...key, update: 1 });
    assert.notEqual(await plain.parameterHash(), once.hash, "no dropout, another update");
  });
});

Deno.test("LoRA dropout: a parted update under an update's key has that update's masks; rollout, logprobs and reference ignore dropout", async () => {
  await withPools(async ({ dropout, plain }) => {
    const batch = await batchFor(plain);
    // Off outside the update: every forward equals the dropout-free group's, bit for bit.
    assert.deepEqual(await dropout.logprobs(batch, TEMPERATURE), batch.oldLogprobs);
    assert.deepEqual(await dropout.referenceLogprobs(batch, TEMPERATURE), batch.refLogprobs);
    const prompts = [[5, 9, 2], [12, 200, 7, 7]];
    const sampling = (seed: number) => ({
      maxTokens: 5,
      temperature: TEMPERATURE,
      choose: (logits: Float32Array, row: number, index: number) =>
        (seed + row * 31 + index * 7 + logits.indexOf(Math.max(...logits))) % logits.length,
    });
    assert.deepEqual(
      await dropout.generate(prompts, sampling(1)),
      await plain.generate(prompts, sampling(1)),
    );
  });
  // The same key in fresh groups: a parted update (a shared group's, one part per agent) sees
  // the fused update's masks; another key's masks give another gradient.
  const norms = async (run: (policy: GroupPolicy, batch: PolicyBatch) => Promise<number>) => {
    let norm = NaN;
    await withPools(async ({ dropout, plain }) => {
      norm = await run(dropout, await batchFor(plain));
    });
    return norm;
  };
  const key = { step: 0, update: 0 };
  const fused = await norms(async (p, b) => (await p.update(b, hyper, key)).gradNorm);
  const parted = await norms(async (p, b) =>
    (await p.updateInParts(b, hyper, [2, 2], key)).gradNorm
  );
  const other = await norms(async (p, b) =>
    (await p.update(b, hyper, { step: 0, update: 1 })).gradNorm
  );
  // Accumulated in two parts, the gradient's sum is taken in another order: float32 rounding.
  assert.ok(Math.abs(parted - fused) <= 1e-6 * fused, `${parted} vs ${fused}`);
  assert.notEqual(other, fused, "another key's masks give another gradient");
});

Deno.test("logprobs at the current weights: the first update's ratio is exactly 1, and generation's logprobs are tempered", async () => {
  await withPools(async ({ plain, frozen }) => {
    const batch = await batchFor(plain);
    // Exact on the cpu backend: policy.logprobs runs the train step's own forward graph (same
    // nodes, same rows), so old - new is 0.0 at every loss token and the ratio exp(0) is 1.
    const first = await plain.update(batch, hyper, { step: 0, update: 0 });
    assert.equal(first.approxKl, 0);
    assert.equal(first.clipFraction, 0);
    const second = await plain.update(batch, hyper, { step: 0, update: 1 });
    assert.notEqual(second.approxKl, 0, "the second update sees the moved policy");
    assert.ok(
      second.klLoss > Math.abs(first.klLoss),
      "KL to the base grows once the adapter moves",
    );

    // Generation records log softmax(logits / T) of what it sampled: the train step's numbers for
    // the same tokens, to the rounding between cached and full attention.
    const prompts = [[5, 9, 2], [12, 200, 7, 7]];
    const rows = await plain.generate(prompts, {
      maxTokens: 4,
      temperature: TEMPERATURE,
      choose: (logits, row, index) => (row * 13 + index * 5) % logits.length,
    });
    const generated = policyBatch(rows.map((r, i) => ({
      agent: "solver",
      promptTokens: Int32Array.from(prompts[i]),
      responseTokens: Int32Array.from(r.tokens),
      logprobs: Float32Array.from(r.logprobs),
      advantage: 0,
    })));
    const recomputed = await plain.logprobs(generated, TEMPERATURE);
    const untempered = await plain.logprobs(generated, 1);
    let tempered = 0;
    let plainGap = 0;
    generated.lossMask.forEach((m, i) => {
      if (m === 0) return;
      tempered = Math.max(tempered, Math.abs(recomputed[i] - generated.oldLogprobs[i]));
      plainGap = Math.max(plainGap, Math.abs(untempered[i] - generated.oldLogprobs[i]));
    });
    assert.ok(tempered < 1e-4, `at T = ${TEMPERATURE}: ${tempered}`);
    assert.ok(plainGap > 1e-2, `at T = 1: ${plainGap}`);

    await assert.rejects(() => frozen.logprobs(batch, TEMPERATURE), PolicyPoolError);
    await assert.rejects(() => frozen.update(batch, hyper, { step: 0, update: 0 }), /frozen/);
  });
});

Deno.test("the pool passes the loss aggregation: seq-sum-const divides by sequences x the constant", async () => {
  await withPools(async ({ plain }) => {
    const batch = await batchFor(plain);
    // At ratio 1 with no KL each loss token contributes -A: responses 4, 5, 2, 6 tokens with
    // advantages 1, -1, 0.5, -0.5 sum to 4 - 5 + 1 - 3 = -3; over 4 sequences x 8: -(-3) / 32.
    const m = await plain.update(batch, { ...hyper, klCoef: 0 }, { step: 0, update: 0 });
    assert.ok(Math.abs(m.loss - 3 / 32) < 1e-7, `loss ${m.loss}`);
  }, { aggregation: "seq-sum-const", aggregationConstant: 8 });
});
