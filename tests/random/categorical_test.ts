import assert from "node:assert/strict";
import {
  normal,
  RandomArgumentError,
  randomStream,
  sampleCategorical,
  sampleLogits,
  samplingDistribution,
  uniform53,
} from "../../engine/random/mod.ts";

const s = randomStream({ seed: 9, purpose: "sample-token", agent: "solver", sample: 0 });
const close = (a: number, b: number, tol = 1e-4) =>
  assert.ok(Math.abs(a - b) < tol, `${a} vs ${b}`);

Deno.test("samplingDistribution: softmax, top-p prefix and renormalization by hand", () => {
  // logits [2, 1, 0], T = 1: weights e^0, e^-1, e^-2 = 1, 0.36788, 0.13534; total 1.50321;
  // probabilities 0.66524, 0.24473, 0.09003.
  const full = samplingDistribution([2, 1, 0], { temperature: 1, topP: 1 });
  assert.deepEqual([...full.categories], [0, 1, 2]);
  [0.66524, 0.24473, 0.09003].forEach((p, i) => close(full.probabilities[i], p));
  // top-p 0.9: 0.66524 < 0.9, 0.66524 + 0.24473 = 0.90997 >= 0.9 -> keep {0, 1};
  // renormalized 1/1.36788 = 0.73106, 0.36788/1.36788 = 0.26894.
  const nucleus = samplingDistribution([2, 1, 0], { temperature: 1, topP: 0.9 });
  assert.deepEqual([...nucleus.categories], [0, 1]);
  close(nucleus.probabilities[0], 0.73106);
  close(nucleus.probabilities[1], 0.26894);
  // top-p 0.5: the first category alone already has 0.665 >= 0.5.
  assert.deepEqual([...samplingDistribution([2, 1, 0], { temperature: 1, topP: 0.5 }).categories], [
    0,
  ]);
  // T = 0.5: logits/T = [4, 2, 0]: weights 1, e^-2 = 0.13534, e^-4 = 0.01832; total 1.15366;
  // probabilities 0.86681, 0.11731, 0.01588.
  const sharp = samplingDistribution([2, 1, 0], { temperature: 0.5, topP: 1 });
  [0.86681, 0.11731, 0.01588].forEach((p, i) => close(sharp.probabilities[i], p));
});

Deno.test("top-p keeps the heaviest prefix (ties by lower index) and walks it in vocab order", () => {
  // logits [0, 1, 1, -Inf]: weights e^-1, 1, 1, 0; top-p 0.99 keeps all three positive ones,
  // listed in vocabulary order; the masked token is absent.
  const d = samplingDistribution([0, 1, 1, -Infinity], { temperature: 1, topP: 0.99 });
  assert.deepEqual([...d.categories], [0, 1, 2]);
  // logits [1, 1, 0]: weights 1, 1, e^-1 = 0.36788, total 2.36788; top-p 0.3 needs 0.71036:
  // the first token in (weight desc, index asc) order, index 0, already has 1 >= 0.71.
  assert.deepEqual([...samplingDistribution([1, 1, 0], { temperature: 1, topP: 0.3 }).categories], [
    0,
  ]);
  // logits [0, 1, 1]: the tie is now at indices 1 and 2; top-p 0.5 (need 1.18394) takes index 1
  // (mass 1 < 1.18), then index 2 (mass 2 >= 1.18).
  assert.deepEqual([...samplingDistribution([0, 1, 1], { temperature: 1, topP: 0.5 }).categories], [
    1,
    2,
  ]);
});

Deno.test("top-p set equals a brute-force full sort on random logits with ties", () => {
  const noise = randomStream({ seed: 11, purpose: "test-logits" });
  for (let trial = 0; trial < 40; trial++) {
    const n = 5 + (trial % 7) * 40;
    // Rounded to quarters so that many logits tie.
    const logits = Array.from(
      { length: n },
      (_, i) => Math.round(normal(noise, trial * 1000 + i) * 8) / 4,
    );
    const topP = [0.1, 0.5, 0.9, 0.95, 0.999][trial % 5];
    const temperature = [0.3, 0.7, 1, 1.5][trial % 4];
    const max = Math.max(...logits);
    const w = logits.map((x) => Math.exp((x - max) / temperature));
    const total = w.reduce((a, b) => a + b, 0);
    const order = w.map((_, i) => i).sort((a, b) => w[b] - w[a] || a - b);
    const kept: number[] = [];
    let mass = 0;
    for (const i of order) {
      if (kept.length > 0 && mass >= topP * total) break;
      kept.push(i);
      mass += w[i];
    }
    const got = samplingDistribution(logits, { temperature, topP }).categories;
    assert.deepEqual([...got], kept.sort((a, b) => a - b), `trial ${trial}`);
  }
});

Deno.test("sampleCategorical is the inverse CDF of the keyed uniform", () => {
  // weights [1, 3]: total 4, category 0 iff u * 4 < 1, i.e. u < 0.25.
  for (let i = 0; i < 200; i++) {
    assert.equal(sampleCategorical(s, i, [1, 3]), uniform53(s, i) < 0.25 ? 0 : 1);
  }
  // Zero-weight categories are never chosen.
  for (let i = 0; i < 200; i++) assert.notEqual(sampleCategorical(s, i, [0, 2, 0, 1]), 0);
});

Deno.test("sampleCategorical frequencies match the weights (4000 draws)", () => {
  const counts = [0, 0, 0];
  for (let i = 0; i < 4000; i++) counts[sampleCategorical(s, i, [0.5, 0.3, 0.2])]++;
  // Binomial sd at n=4000, p=0.5 is 31.6; 5 sd = 158.
  [2000, 1200, 800].forEach((want, i) => assert.ok(Math.abs(counts[i] - want) < 158, `${counts}`));
});

Deno.test("sampleLogits: greedy at temperature 0 (lowest index on ties), nucleus respected", () => {
  assert.equal(sampleLogits(s, 0, [1, 5, 5, 2], { temperature: 0, topP: 1 }), 1);
  for (let i = 0; i < 300; i++) {
    const token = sampleLogits(s, i, [2, 1, 0], { temperature: 1, topP: 0.9 });
    assert.ok(token === 0 || token === 1);
    // The walk over kept categories [0, 1] in vocab order: weights 1 and e^-1, so token 0 iff
    // u * (1 + e^-1) < 1.
    assert.equal(token, uniform53(s, i) * (1 + Math.exp(-1)) < 1 ? 0 : 1);
  }
});

Deno.test("bad sampling inputs name the field", () => {
  const bad: Array<[() => unknown, string]> = [
    [() => samplingDistribution([1, 2], { temperature: -1, topP: 1 }), "temperature"],
    [() => samplingDistribution([1, 2], { temperature: 1, topP: 0 }), "topP"],
    [() => samplingDistribution([1, NaN], { temperature: 1, topP: 1 }), "logits[1]"],
    [() => samplingDistribution([-Infinity], { temperature: 1, topP: 1 }), "logits"],
    [() => sampleCategorical(s, 0, [1, -1]), "weights[1]"],
    [() => sampleCategorical(s, 0, [0, 0]), "weights"],
  ];
  for (const [fn, field] of bad) {
    assert.throws(fn, (e) => e instanceof RandomArgumentError && e.field === field);
  }
});
