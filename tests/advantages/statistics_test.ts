import assert from "node:assert/strict";
import {
  AdvantageInputError,
  baselineStatistics,
  checkEstimatorOptions,
  normalizedAdvantage,
} from "../../engine/advantages/mod.ts";
import { assertClose } from "./fixture.ts";

Deno.test("baselineStatistics: population vs unbiased by hand", () => {
  // [1, 0, 0, 1]: mu = 0.5; squared deviations 4 * 0.25 = 1; population 1/4 -> sigma 0.5;
  // unbiased 1/3 -> sigma 0.57735.
  assert.deepEqual(baselineStatistics([1, 0, 0, 1], "population"), { mu: 0.5, sigma: 0.5, n: 4 });
  const u = baselineStatistics([1, 0, 0, 1], "unbiased");
  assert.equal(u.mu, 0.5);
  assertClose(u.sigma, Math.sqrt(1 / 3));
  // [2, 4, 9]: mu = 5; deviations -3, -1, 4 -> squares 9 + 1 + 16 = 26; population 26/3, unbiased 13.
  assertClose(baselineStatistics([2, 4, 9], "population").sigma, Math.sqrt(26 / 3));
  assertClose(baselineStatistics([2, 4, 9], "unbiased").sigma, Math.sqrt(13));
});

Deno.test("a group of one: paper convention gives advantage 0, code convention mu=0 sigma=1", () => {
  const paper = baselineStatistics([0.7], "population");
  assert.deepEqual(paper, { mu: 0.7, sigma: 0, n: 1 });
  assert.ok(Object.is(normalizedAdvantage(0.7, paper, 1e-6), 0));
  const code = baselineStatistics([0.7], "unbiased");
  assert.deepEqual(code, { mu: 0, sigma: 1, n: 1 });
  // 0.7 / (1 + 1e-6) = 0.6999993
  assertClose(normalizedAdvantage(0.7, code, 1e-6), 0.7 / 1.000001);
});

Deno.test("all-equal rewards give exactly 0, not rounding noise over eps, under both conventions", () => {
  // 0.1 * 3 sums to 0.30000000000000004, whose third is not 0.1: the naive mean would leave
  // 1.4e-17 / 1e-6 = 1.4e-11 instead of 0.
  for (const convention of ["population", "unbiased"] as const) {
    const stats = baselineStatistics([0.1, 0.1, 0.1], convention);
    assert.deepEqual(stats, { mu: 0.1, sigma: 0, n: 3 });
    assert.ok(Object.is(normalizedAdvantage(0.1, stats, 1e-6), 0));
    // Even with eps = 0 (the paper's bare formula) the advantage is 0, not 0/0 = NaN.
    assert.ok(Object.is(normalizedAdvantage(0.1, stats, 0), 0));
  }
});

Deno.test("normalizedAdvantage is (R - mu) / (sigma + eps)", () => {
  // (1 - 0.5) / (0.5 + 1e-6) = 0.5 / 0.500001 = 0.999998000004
  assertClose(normalizedAdvantage(1, { mu: 0.5, sigma: 0.5, n: 4 }, 1e-6), 0.999998000004, 1e-12);
});

Deno.test("bad inputs name the field", () => {
  assert.throws(() => baselineStatistics([], "population"), AdvantageInputError);
  assert.throws(
    () => checkEstimatorOptions({ sigma: "sample" as "population", eps: 1e-6 }),
    (e) =>
      e instanceof AdvantageInputError && e.field === "sigma" &&
      /"population" or "unbiased"/.test(e.message),
  );
  assert.throws(
    () => checkEstimatorOptions({ sigma: "population", eps: -1 }),
    (e) => e instanceof AdvantageInputError && e.field === "eps",
  );
});
