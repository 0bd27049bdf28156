import assert from "node:assert/strict";
import {
  avgAtK,
  criticImprovement,
  gainPerParameter,
  gradientSpikes,
  gradNormStability,
  majorityCorrect,
  meanPassAtK,
  passAtK,
  quantile,
  StatsInputError,
  summarize,
  tQuantileAt,
  twoSidedP,
  welchFromSamples,
  welchFromSummary,
} from "../../analysis/stats/mod.ts";
import { RunningMedian } from "../../analysis/stats/running-median.ts";
import { mulberry32 } from "../support/mulberry32.ts";

const close = (a: number, b: number, tol = 1e-12) =>
  assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${a} != ${b}`);

Deno.test("pass@k hand-computed cases", () => {
  close(passAtK(4, 1, 2), 1 - 3 / 6); // 1 - C(3,2)/C(4,2)
  close(passAtK(5, 2, 2), 1 - 3 / 10); // 1 - C(3,2)/C(5,2)
  close(passAtK(16, 0, 16), 0);
  close(passAtK(16, 1, 16), 1);
  close(passAtK(1000, 1, 1), 0.001);
  // C(2000, 1000) ~ 2e600 overflows doubles; the product form does not.
  // C(1998, 1000) / C(2000, 1000) = (1000 * 999) / (2000 * 1999).
  close(passAtK(2000, 2, 1000), 1 - (1000 * 999) / (2000 * 1999));
});

Deno.test("pass@k rejects k > n, c > n, and non-integers with the field named", () => {
  assert.throws(() => passAtK(4, 1, 5), (e) => e instanceof StatsInputError && e.field === "k");
  assert.throws(() => passAtK(4, 5, 1), (e) => e instanceof StatsInputError && e.field === "c");
  assert.throws(() => passAtK(4.5, 1, 1), /n = 4.5/);
  assert.throws(() => passAtK(4, 1, 0), /k must be at least 1/);
});

Deno.test("avg@k and mean pass@k over problems", () => {
  const problems = [{ n: 4, c: 1 }, { n: 4, c: 3 }, { n: 4, c: 0 }];
  close(avgAtK(problems), (0.25 + 0.75 + 0) / 3);
  close(meanPassAtK(problems, 4), (1 + 1 + 0) / 3);
  close(meanPassAtK(problems, 2), ((1 - 3 / 6) + (1 - 0) + 0) / 3);
  assert.throws(() => avgAtK([]), StatsInputError);
  assert.throws(() => avgAtK([{ n: 2, c: 3 }]), /problems\[0\]\.c/);
});

Deno.test("mean ± SEM hand case", () => {
  const s = summarize([1, 2, 3, 6]);
  close(s.mean, 3);
  close(s.variance, (4 + 1 + 0 + 9) / 3);
  close(s.sem, Math.sqrt(14 / 3 / 4));
  assert.throws(() => summarize([1]), /at least 2/);
  assert.throws(() => summarize([1, NaN]), /sample\[1\]/);
});

// Closed forms of Student's t CDF for small df, independent of the library.
const cdf1 = (t: number) => 0.5 + Math.atan(t) / Math.PI;
const cdf2 = (t: number) => 0.5 + t / (2 * Math.sqrt(2 + t * t));
const cdf4 = (t: number) => {
  const x = t * t / (4 + t * t);
  return 0.5 + Math.sign(t) * 0.5 * (1.5 * Math.sqrt(x) - 0.5 * x ** 1.5);
};

Deno.test("t distribution agrees with closed forms for df 1, 2, 4", () => {
  for (const t of [0.1, 0.7, 1.5, 3.2, 8]) {
    close(twoSidedP(t, 1), 2 * (1 - cdf1(t)), 1e-13);
    close(twoSidedP(-t, 2), 2 * (1 - cdf2(t)), 1e-13);
    close(twoSidedP(t, 4), 2 * (1 - cdf4(t)), 1e-12);
  }
  // df = 2 quantile: t = (2p - 1) / sqrt(2 p (1 - p)).
  for (const p of [0.6, 0.9, 0.975]) {
    close(tQuantileAt(p, 2), (2 * p - 1) / Math.sqrt(2 * p * (1 - p)));
  }
  close(tQuantileAt(0.975, 1e12), 1.959963984540054, 1e-9);
  assert.throws(() => tQuantileAt(1, 3), /\(0, 1\)/);
  assert.throws(() => twoSidedP(1, 0), /df = 0/);
});

Deno.test("Welch hand case: [1,2,3] vs [4,5,6] gives df 4 and the closed-form p", () => {
  const w = welchFromSamples([1, 2, 3], [4, 5, 6]);
  close(w.diff, -3);
  close(w.se, Math.sqrt(2 / 3));
  close(w.df, 4);
  close(w.t, -3 / Math.sqrt(2 / 3));
  close(w.p, 2 * cdf4(w.t), 1e-12);
  // 95% quantile of t(4) is 2.7764451051977987 (tabulated); CI = diff ± q * se.
  close(w.ci[0], -3 - 2.7764451051977987 * Math.sqrt(2 / 3), 1e-12);
  close(w.ci[1], -3 + 2.7764451051977987 * Math.sqrt(2 / 3), 1e-12);
});

Deno.test("Welch degenerate inputs follow scipy or fail naming the group", () => {
  const apart = welchFromSamples([1, 1, 1], [2, 2]);
  assert.equal(apart.t, -Infinity);
  assert.equal(apart.df, 1);
  assert.equal(apart.p, 0);
  assert.deepEqual([...apart.ci], [-1, -1]);
  const same = welchFromSamples([1, 1], [1, 1]);
  assert.ok(Number.isNaN(same.t) && Number.isNaN(same.p));
  // One zero-variance group: df reduces to the other group's n - 1.
  close(welchFromSamples([5, 5, 5], [1, 2, 3]).df, 2);
  assert.throws(() => welchFromSamples([1], [1, 2]), /a\.length = 1/);
  assert.throws(
    () => welchFromSummary({ mean: 1, sem: 0.1, n: 1 }, { mean: 0, sem: 0.1, n: 5 }),
    (e) => e instanceof StatsInputError && e.field === "a.n",
  );
  assert.throws(
    () => welchFromSummary({ mean: 1, sem: -1, n: 3 }, { mean: 0, sem: 0.1, n: 5 }),
    /a\.sem/,
  );
});

Deno.test("critic improvement: majority votes, per-round rates and accuracy", () => {
  const ans = (answer: string | null, correct: boolean) => ({ answer, correct });
  assert.equal(majorityCorrect([ans("2", true), ans("3", false), ans("3", false)]), false);
  assert.equal(majorityCorrect([ans("2", true), ans("3", false)]), true, "tie: first answer");
  assert.equal(majorityCorrect([ans(null, false), ans(null, false)]), false);
  const questions = [
    // wrong consensus -> right in round 1, right in round 2
    {
      rounds: [[ans("1", false), ans("1", false), ans("2", true)], [
        ans("2", true),
        ans("2", true),
        ans("1", false),
      ], [ans("2", true), ans("2", true), ans("2", true)]],
    },
    // right consensus -> wrong in round 1 -> right in round 2
    {
      rounds: [[ans("5", true), ans("5", true), ans("4", false)], [
        ans("4", false),
        ans("4", false),
        ans("5", true),
      ], [ans("5", true), ans("4", false), ans("5", true)]],
    },
    // wrong stays wrong
    {
      rounds: [[ans("7", false), ans("7", false), ans(null, false)], [
        ans("7", false),
        ans("7", false),
        ans("7", false),
      ], [ans("7", false), ans("7", false), ans("7", false)]],
    },
    // right stays right
    {
      rounds: [[ans("9", true), ans("9", true), ans("9", true)], [
        ans("9", true),
        ans("9", true),
        ans("9", true),
      ], [ans("9", true), ans("9", true), ans("9", true)]],
    },
  ];
  const [r1, r2] = criticImprovement(questions);
  assert.equal(r1.wrongConsensus, 2);
  assert.deepEqual([r1.wrongToRight, r1.rightToWrong], [1, 1]);
  close(r1.improvementRate, 0.25);
  close(r1.degradationRate, 0.25);
  close(r1.correctionRate, 0.5);
  close(r1.accuracy, (2 + 1 + 0 + 3) / 12);
  assert.deepEqual([r2.wrongToRight, r2.rightToWrong], [1, 0]);
  close(r2.accuracy, (3 + 2 + 0 + 3) / 12);
  assert.throws(() => criticImprovement([{ rounds: [[ans("1", true)]] }]), /critic round/);
});

Deno.test("gradient spikes: above 10x the running median of the earlier finite nonzero norms", () => {
  assert.deepEqual(gradientSpikes([1, 1, 1, 50, NaN]), [false, false, false, true, false]);
  // 25 > 10 * median(2, 1) = 15; 30 > 10 * median(2, 1, 25) = 20; 9 < 10 * median(2, 1, 25, 30).
  assert.deepEqual(gradientSpikes([2, 1, 25, 30, 9]), [false, false, true, true, false]);
  // Zero norms (no signal) are neither spikes nor part of the median: the first informative
  // update after them is not a spike. Counted in, median(0, 0) = 0 would make 1 a spike.
  assert.deepEqual(gradientSpikes([0, 0, 1, 1.2, 0, 11, 13]), [
    false,
    false,
    false,
    false,
    false,
    false, // 11 is not above 10 * median(1, 1.2) = 11
    true, // 13 > 10 * median(1, 1.2, 11) = 12
  ]);
  // Exactly 10x is not a spike; a first informative norm, however large, is not either.
  assert.deepEqual(gradientSpikes([1, 10]), [false, false]);
  assert.deepEqual(gradientSpikes([Infinity, 1e9, 1]), [false, false, false]);
  assert.deepEqual(gradientSpikes([1, 10, 30], 2), [false, true, true]);
  assert.throws(() => gradientSpikes([1], 0), /multiple = 0/);
});

Deno.test("running median equals the type-7 median of every prefix, bit for bit", () => {
  const rand = mulberry32(3);
  const m = new RunningMedian();
  assert.ok(Number.isNaN(m.median));
  const xs: number[] = [];
  for (let i = 0; i < 500; i++) {
    const x = rand() < 0.1 ? 1 : rand() * 100;
    xs.push(x);
    m.push(x);
    assert.equal(m.median, quantile(xs, 0.5), `prefix ${i + 1}`);
  }
});

Deno.test("grad-norm stability: quantiles, spikes against the running median, non-finite", () => {
  close(quantile([1, 2, 3, 4], 0.5), 2.5);
  close(quantile([1, 2, 3, 4, 5], 0.99), 4.96);
  const s = gradNormStability([1, 2, 1, 30, NaN, 2, Infinity, 25], 10);
  assert.equal(s.steps, 8);
  assert.equal(s.nonFinite, 2);
  // finite in order: 1 2 1 30 2 25; 30 > 10 * median(1,2,1)=10 -> spike;
  // 25 > 10 * median(1,2,1,30,2)=20 -> spike.
  assert.equal(s.spikes, 2);
  assert.equal(
    s.spikes,
    gradientSpikes([1, 2, 1, 30, NaN, 2, Infinity, 25]).filter(Boolean).length,
  );
  close(s.median, 2);
  close(s.max, 30);
  close(s.maxOverMedian, 15);
  close(s.p99, quantile([1, 1, 2, 2, 25, 30], 0.99));
  assert.throws(() => gradNormStability([NaN]), /no finite/);
});

Deno.test("gain per trainable parameter", () => {
  close(gainPerParameter(0.419, 0.399, 1e6), 0.02 / 1e6, 1e-9);
  assert.throws(() => gainPerParameter(0.5, 0.4, 0), /trainableParameters/);
});
