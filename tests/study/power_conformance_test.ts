/**
 * The power analysis against scipy and statsmodels: every case of
 * tests/study/fixtures/power-reference.jsonl (written by tests/study/power-reference.py: the
 * noncentral t CDF, pooled, Welch-df and one-sample power, and the effects and sizes solved from
 * them, with small and unequal n and power near alpha and near 1) to 1e-6 relative, and cases
 * worked by hand.
 */
import assert from "node:assert/strict";
import {
  detectableNoncentrality,
  noncentralTCdf,
  oneSampleMde,
  oneSamplePower,
  oneSampleSeeds,
  pooledMde,
  pooledPower,
  pooledSize,
  StatsInputError,
  tQuantileAt,
  tTestPower,
  welchMde,
  welchPower,
  welchSeeds,
} from "../../analysis/mod.ts";

type Case = Record<string, number | string>;
const FIXTURE = new URL("./fixtures/power-reference.jsonl", import.meta.url);
const lines = (await Deno.readTextFile(FIXTURE)).trim().split("\n").map((l) => JSON.parse(l));
const cases: Case[] = lines.filter((c) => c.kind !== "source");
const TOLERANCE = 1e-6;

function computed(c: Case): number {
  const n = (key: string) => c[key] as number;
  const design = () => ({ sd1: n("sd1"), n1: n("n1"), sd2: n("sd2"), n2: n("n2") });
  switch (c.kind) {
    case "nct-cdf":
      return noncentralTCdf(n("t"), n("df"), n("nc"));
    case "pooled-power":
      return pooledPower(n("d"), n("n1"), n("n2"), n("alpha"));
    case "pooled-effect":
      return pooledMde(n("n1"), n("n2"), n("alpha"), n("power"));
    case "pooled-nobs1":
      return pooledSize(n("d"), n("alpha"), n("power"), n("ratio"));
    case "welch-power":
      return welchPower(n("delta"), design(), n("alpha"));
    case "welch-mde":
      return welchMde(design(), n("alpha"), n("power"));
    case "one-sample-power":
      return oneSamplePower(n("d"), n("n"), n("alpha"));
    case "one-sample-effect":
      return oneSampleMde(1, n("n"), n("alpha"), n("power"));
  }
  throw new Error(`unknown fixture case kind ${c.kind}`);
}

Deno.test("power: the fixture covers every kind, small and unequal n and the power edges", () => {
  const kinds = new Set(cases.map((c) => c.kind));
  assert.equal(kinds.size, 8);
  assert.ok(cases.some((c) => c.n1 === 2 && c.n2 === 2));
  assert.ok(cases.some((c) => typeof c.n1 === "number" && c.n1 !== c.n2));
  assert.ok(cases.some((c) => c.kind === "pooled-effect" && c.power === 0.06));
  assert.ok(cases.some((c) => c.kind === "pooled-effect" && c.power === 0.999));
  assert.ok(lines[0].kind === "source" && typeof lines[0].statsmodels === "string");
});

Deno.test("power: every fixture case within 1e-6 relative of scipy/statsmodels", () => {
  const misses: string[] = [];
  let worst = 0;
  for (const c of cases) {
    const got = computed(c);
    const want = c.value as number;
    const rel = Math.abs(got - want) / Math.max(Math.abs(want), 1e-300);
    // A CDF value near 0 is judged on its absolute error, the series' stopping bound.
    const ok = rel <= TOLERANCE || (c.kind === "nct-cdf" && Math.abs(got - want) < 1e-11);
    worst = Math.max(worst, c.kind === "nct-cdf" && Math.abs(want) < 1e-5 ? 0 : rel);
    if (!ok) misses.push(`${JSON.stringify(c)} -> ${got} (relative error ${rel.toExponential(2)})`);
  }
  assert.deepEqual(misses, []);
  console.log(
    `power conformance: ${cases.length} cases, worst relative error ${worst.toExponential(2)}`,
  );
});

Deno.test("power: hand-computed cases", () => {
  // nc = 0: the noncentral t is Student's t; the power of a two-sided test at nc = 0 is alpha.
  // With 2 df, F(t) = 1/2 + t / (2 sqrt(2 + t²)).
  assert.ok(Math.abs(noncentralTCdf(1.3, 2, 0) - (0.5 + 1.3 / (2 * Math.sqrt(2 + 1.69)))) < 1e-14);
  assert.ok(Math.abs(tTestPower(0, 9, 0.05) - 0.05) < 1e-12);
  // t = 0: F(0; df, nc) = Φ(-nc) for any df.
  assert.ok(Math.abs(noncentralTCdf(0, 3, 1) - 0.15865525393145707) < 1e-14);
  // Reflection: F(t; ν, δ) = 1 - F(-t; ν, -δ).
  assert.ok(Math.abs(noncentralTCdf(-1.1, 6, 0.7) - (1 - noncentralTCdf(1.1, 6, -0.7))) < 1e-14);
  // Large df: the two-sided z-test, power Φ(nc - z) + Φ(-nc - z). At nc = z_.975 + z_.8 the
  // first term is 0.8 and the second Φ(-4.7616) = 9.60e-7, so the solved nc lies just below
  // (up to t_.975 exceeding z_.975 by z(1 + z²)/(4 df) = 2.4e-7 at 1e7 df).
  assert.ok(Math.abs(tTestPower(1.959963985 + 0.841621234, 1e7, 0.05) - 0.80000096) < 2e-7);
  const nc = detectableNoncentrality(1e7, 0.05, 0.8);
  assert.ok(nc < 1.959963985 + 0.841621234 && nc > 1.959963985 + 0.841621234 - 1e-5);
  // Welch with equal sds and sizes is the pooled test: MDE = sd · d_pooled.
  const d = pooledMde(5, 5, 0.05, 0.8);
  assert.ok(Math.abs(welchMde({ sd1: 2, n1: 5, sd2: 2, n2: 5 }, 0.05, 0.8) - 2 * d) < 1e-9);
  // n = 2 per group, df = 2: the MDE is many standard deviations (t_.975,2 = 4.303).
  // With 2 df the quantile is closed-form: t_p = q sqrt(2 / (1 - q²)), q = 2p - 1.
  assert.ok(Math.abs(tQuantileAt(0.975, 2) - 0.95 * Math.sqrt(2 / (1 - 0.95 ** 2))) < 1e-10);
  assert.ok(pooledMde(2, 2, 0.05, 0.8) > 4);
  // Seeds needed: the smallest n whose power reaches the target, and n - 1 does not.
  const n = welchSeeds(0.05, 0.03, 0.03, 0.05, 0.8)!;
  assert.ok(welchPower(0.05, { sd1: 0.03, n1: n, sd2: 0.03, n2: n }, 0.05) >= 0.8);
  assert.ok(welchPower(0.05, { sd1: 0.03, n1: n - 1, sd2: 0.03, n2: n - 1 }, 0.05) < 0.8);
  const m = oneSampleSeeds(0.05, 0.03, 0.05, 0.8)!;
  assert.ok(oneSamplePower(0.05 / 0.03, m, 0.05) >= 0.8);
  assert.ok(oneSamplePower(0.05 / 0.03, m - 1, 0.05) < 0.8);
  // Out of reach: null, not a number that looks like a plan.
  assert.equal(welchSeeds(1e-6, 1, 1, 0.05, 0.8, 1000), null);
});

Deno.test("power: bad input is refused with the quantity named", () => {
  assert.throws(() => welchMde({ sd1: 1, n1: 1, sd2: 1, n2: 5 }, 0.05, 0.8), StatsInputError);
  assert.throws(() => welchMde({ sd1: 0, n1: 5, sd2: 0, n2: 5 }, 0.05, 0.8), /both groups/);
  assert.throws(() => pooledMde(5, 5, 0.05, 0.04), /power/);
  assert.throws(() => noncentralTCdf(1, 0, 1), /degrees of freedom/);
  assert.ok(Number.isNaN(noncentralTCdf(NaN, 3, 1)));
});
