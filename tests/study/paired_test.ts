/**
 * The paired analysis of the study's claims: when two cells' runs pair by seed (pairing.ts), the
 * paired t-test beside Welch's and the verdict from it; the paired test's power. Checked against
 * scipy (tests/study/fixtures/paired-reference.json, written by tests/study/paired-reference.py):
 * the paired test on small examples (seeds out of order, seeds only one cell ran), the paired
 * power, detectable difference and seeds needed (scipy.stats.nct), and every two-cell claim of
 * the v2 study recomputed from its study.json, including the two the issue states: Dr. MAS vs GRPO
 * with the invalid-action penalty (-1.39 points, paired p = 0.023) and the swapped heterogeneous
 * team (-1.90 points, paired p = 0.017).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  noncentralTCdf,
  oneSampleMde,
  oneSamplePower,
  oneSampleSeeds,
} from "../../analysis/mod.ts";
import { claimPower } from "../../study/claim-power.ts";
import { decidingTest } from "../../study/claims.ts";
import { type PairableCell, pairingOf, type PairSide } from "../../study/pairing.ts";
import type { ClaimMetric, Expectation } from "../../study/grid-schema.ts";
import { readStudyResults } from "../../study/read-study-results.ts";
import { renderStudy } from "../../study/render-study.ts";
import { type ClaimResult, type StudyResults, testClaim } from "../../study/study-results.ts";
import { powerSide, SIXTEEN } from "./power-side.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const FIXTURE = new URL("./fixtures/paired-reference.json", import.meta.url);
const reference = JSON.parse(await Deno.readTextFile(FIXTURE));

/** v2's study.json: docs/study/v2/study.json, or docs/study/study.json before it moved there. */
async function v2File(): Promise<string> {
  for (const file of ["docs/study/v2/study.json", "docs/study/study.json"]) {
    try {
      const json = JSON.parse(await Deno.readTextFile(join(ROOT, file)));
      if (String(json.title).startsWith("Study v2")) return join(ROOT, file);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  throw new Error("v2's study.json is in neither docs/study/v2 nor docs/study");
}

function near(got: number, want: number, rel: number, what: string): void {
  const err = Math.abs(got - want) / Math.max(Math.abs(want), 1e-300);
  assert.ok(err <= rel || Math.abs(got - want) < 1e-12, `${what}: ${got} vs ${want}`);
}

type Benchmarks = Record<string, { problems: number; sha256: string }>;

/** A cell for pairing: its runs' seeds (with benchmark hashes, where given) and its tasks. */
function cell(
  id: string,
  seeds: readonly number[],
  opts: { tasks?: string; hashes?: (seed: number) => Benchmarks | undefined } = {},
): PairableCell {
  return {
    id,
    problems: 64,
    setup: {
      tasks: opts.tasks ?? "synthetic math, difficulty 1; 256 train, 64 validation",
      evaluation: "validation × 4 samples per problem",
    },
    runs: seeds.map((seed) => ({
      runId: `${id}-${seed}`,
      seed,
      avg: 0,
      pass: 0,
      seconds: 1,
      ...(opts.hashes?.(seed) ? { benchmarks: opts.hashes(seed) } : {}),
    })),
  };
}

function side(
  c: PairableCell,
  values: readonly number[],
  seeds: readonly number[] | null = c.runs.map((r) => r.seed),
): PairSide {
  return { cell: c, values, seeds };
}

Deno.test("paired test: scipy's ttest_rel over the common seeds, with r and Welch's p beside", () => {
  assert.equal(reference.tests.length, 6);
  for (const [i, t] of reference.tests.entries()) {
    const a = cell("a", t.seeds_a);
    const b = cell("b", t.seeds_b);
    const r = testClaim(
      { metric: "grad-norm-max-over-median", expect: "higher" },
      side(a, t.a),
      side(b, t.b),
      0.05,
    );
    const what = `example ${i}`;
    assert.deepEqual(r.pairing?.seeds, t.pairs, what);
    assert.equal(r.pairing?.basis, "seed");
    assert.equal(r.decidedBy, "paired");
    const p = r.paired!;
    assert.equal(p.n, t.pairs.length);
    assert.equal(p.df, t.df);
    near(p.diff, t.diff, 1e-12, `${what} diff`);
    near(p.p, t.p, 1e-9, `${what} p`);
    if (typeof t.t === "string") {
      assert.equal(p.t, t.t === "Infinity" ? Infinity : -Infinity, `${what} t`);
    } else {
      near(p.t, t.t, 1e-9, `${what} t`);
      near(p.ci[0], t.ci[0], 1e-9, `${what} ci low`);
      near(p.ci[1], t.ci[1], 1e-9, `${what} ci high`);
    }
    near(p.correlation!, t.r, 1e-9, `${what} r`);
    near(r.test!.p, t.welch_p, 1e-9, `${what} Welch p over every value`);
  }
  // Example 2: seed 3 ran only in a, seed 5 only in b; the pairing names them.
  const t = reference.tests[2];
  const r = testClaim(
    { metric: "grad-norm-spikes", expect: "lower" },
    side(cell("a", t.seeds_a), t.a),
    side(cell("b", t.seeds_b), t.b),
    0.05,
  );
  assert.deepEqual(r.pairing!.unmatched, [{ cell: "a", seeds: [3] }, { cell: "b", seeds: [5] }]);
});

Deno.test("paired power: the one-sample power of the differences, as scipy's nct gives it", () => {
  const cases = reference.power.filter((c: { kind: string }) => c.kind === "paired-power");
  assert.equal(cases.length, 16);
  for (const c of cases) {
    const what = JSON.stringify({ sd: c.sd, n: c.n, delta: c.delta, alpha: c.alpha });
    near(oneSamplePower(c.delta / c.sd, c.n, c.alpha), c.power_at_delta, 1e-6, `${what} power`);
    near(oneSampleMde(c.sd, c.n, c.alpha, c.power), c.mde, 1e-6, `${what} mde`);
    assert.equal(oneSampleSeeds(c.delta, c.sd, c.alpha, c.power, 10_000), c.seeds_needed, what);
  }
  // From per-seed values, through the claim's power analysis.
  const fromValues = reference.power.filter((c: { kind: string }) =>
    c.kind === "paired-power-from-values"
  );
  assert.equal(fromValues.length, 2);
  for (const c of fromValues) {
    const size = { problems: 64, samples: 4 };
    const seeds = c.a.map((_: number, i: number) => i);
    const p = claimPower({
      metric: "avg@k",
      expect: "higher",
      paperEffect: { difference: c.delta },
      cell: { cell: "a", values: c.a, seeds, observed: size, planned: size },
      reference: { cell: "b", values: c.b, seeds, observed: size, planned: size },
      seeds: c.n,
      alpha: c.alpha,
      power: c.power,
      paired: true,
    });
    const q = p.paired!;
    assert.equal(q.pairs, c.a.length);
    near(q.observedSd!, c.sd, 1e-12, "sd of the differences");
    assert.equal(q.sd, q.observedSd, "nothing resized");
    near(q.correlation!, c.r, 1e-9, "r");
    near(q.powerAtPaper!, c.power_at_delta, 1e-6, "paired power at the paper's effect");
    near(q.mde!, c.mde, 1e-6, "paired mde");
    assert.equal(q.seedsNeeded, c.seeds_needed);
    // Welch's figures are unchanged beside it.
    assert.ok(p.mde! > q.mde!, "with r > 0 the paired test detects less");
  }
});

Deno.test("noncentral t beyond |nc| = 37.6, at few degrees of freedom: scipy's nct within 1e-9", () => {
  // Where exp(-nc²/2) underflows, the series is summed from its largest term (noncentral-t.ts);
  // R's normal approximation there was off by up to 0.05 at 1 degree of freedom.
  assert.equal(reference.nct.length, 392);
  let worst = 0;
  for (const c of reference.nct) {
    const err = Math.abs(noncentralTCdf(c.t, c.df, c.nc) - c.value);
    worst = Math.max(worst, err);
    assert.ok(err < 1e-9, `F(${c.t}; ${c.df}, ${c.nc}) = ${c.value}: off by ${err}`);
  }
  console.log(
    `noncentral t, large nc: ${reference.nct.length} cases, worst ${worst.toExponential(2)}`,
  );
});

Deno.test("paired power: unpaired designs, seeds unknown, too few pairs, a resized evaluation", () => {
  const base = {
    metric: "avg@k" as const,
    expect: "higher" as const,
    paperEffect: { difference: 0.02 },
    seeds: 5,
    alpha: 0.05,
    power: 0.8,
  };
  const a = [0.3, 0.34, 0.29, 0.33, 0.31];
  const b = [0.28, 0.3, 0.3, 0.29, 0.27];
  const seeds = [0, 1, 2, 3, 4];
  assert.equal(
    claimPower({
      ...base,
      cell: powerSide("a", a, SIXTEEN, seeds),
      reference: powerSide("b", b, SIXTEEN, seeds),
    }).paired,
    null,
  );
  assert.equal(
    claimPower({
      ...base,
      paired: true,
      cell: powerSide("a", a, SIXTEEN, null),
      reference: powerSide("b", b, SIXTEEN, seeds),
    })
      .paired,
    null,
  );
  const few = claimPower({
    ...base,
    paired: true,
    cell: powerSide("a", a, SIXTEEN, seeds),
    reference: powerSide("b", b, SIXTEEN, [4, 5, 6, 7, 8]),
  }).paired!;
  assert.equal(few.mde, null);
  assert.match(few.note!, /1 seed\(s\) ran in both cells/);
  // Four common seeds of five: the spread is theirs, and the note says so.
  const four = claimPower({
    ...base,
    paired: true,
    cell: powerSide("a", a, SIXTEEN, seeds),
    reference: powerSide("b", b, SIXTEEN, [0, 1, 2, 3, 9]),
  }).paired!;
  assert.equal(four.pairs, 4);
  assert.match(four.note!, /over the 4 seeds both cells ran/);
  // A larger evaluation: the sides' spreads shrink, and the differences' with them at the
  // observed correlation; the conservative end never below the other.
  const big = { problems: 256, samples: 16 };
  const same = claimPower({
    ...base,
    paired: true,
    cell: powerSide("a", a, SIXTEEN, seeds),
    reference: powerSide("b", b, SIXTEEN, seeds),
  });
  const more = claimPower({
    ...base,
    paired: true,
    cell: powerSide("a", a, big, seeds),
    reference: powerSide("b", b, big, seeds),
  });
  const [p0, p1] = [same.paired!, more.paired!];
  assert.ok(p1.sd! < p0.sd! && p1.sdLow! <= p1.sd!);
  assert.match(p1.note!, /correlation held at the earlier runs' r = /);
  const r = p0.correlation!;
  const h = (x: number, y: number) => Math.sqrt(x * x + y * y - 2 * r * x * y);
  const [sa, sb] = more.spread;
  near(p1.sd!, p0.sd! * h(sa.sd, sb.sd) / h(sa.observedSd, sb.observedSd), 1e-12, "rescaled sd");
  // One-cell claims have no paired power.
  assert.equal(
    claimPower({ ...base, paired: true, cell: powerSide("a", a, SIXTEEN, seeds), reference: null })
      .paired,
    null,
  );
});

Deno.test("pairing: seeds for gradient metrics, equal benchmark hashes for accuracy, else the tasks", () => {
  const sha = (x: string) => ({ validation: { problems: 64, sha256: x.repeat(64) } });
  const values = [0.3, 0.31, 0.35];
  const pair = (metric: ClaimMetric, a: PairableCell, b: PairableCell) =>
    pairingOf(metric, side(a, values), side(b, values));
  // Same hashes seed by seed (each seed its own problems): paired on the hashes.
  const perSeed = (s: number) => sha(String(s));
  const a = cell("a", [0, 1, 2], { hashes: perSeed });
  assert.deepEqual(pair("avg@k", a, cell("b", [0, 1, 2], { hashes: perSeed })), {
    paired: true,
    basis: "benchmark-sha256",
    reason: null,
    seeds: [0, 1, 2],
    unmatched: [],
  });
  // Seed 1 evaluated on other problems in b: not paired, and the seed named.
  const other = cell("b", [0, 1, 2], { hashes: (s) => sha(s === 1 ? "f" : String(s)) });
  const differ = pair("pass@k", a, other);
  assert.equal(differ.paired, false);
  assert.match(
    differ.reason!,
    /seed 1 was evaluated on other problems in a \(validation 111111111111…\) than in b \(validation ffffffffffff…\)/,
  );
  // The same runs pair for a gradient metric: the seed is the design.
  assert.equal(pair("grad-norm-max-over-median", a, other).basis, "seed");
  assert.equal(pair("critic-improvement", a, other).paired, false);
  // No hashes (v1, v2): the same tasks pair; other tasks do not.
  const old = cell("c", [0, 1, 2]);
  assert.equal(pair("avg@k", old, cell("d", [0, 1, 2])).basis, "same-tasks");
  assert.equal(pair("avg@k", a, old).basis, "same-tasks", "hashes on one side only");
  const elsewhere = pair("avg@k", old, cell("d", [0, 1, 2], { tasks: "math files (x.jsonl)" }));
  assert.equal(elsewhere.paired, false);
  assert.match(elsewhere.reason!, /did not record their benchmarks' SHA-256/);
  // Fewer than 2 common seeds, a repeated seed, values without seeds.
  const one = pairingOf("avg@k", side(cell("a", [0, 1]), [1, 2]), side(cell("b", [1, 2]), [1, 2]));
  assert.equal(one.paired, false);
  assert.deepEqual(one.seeds, [1]);
  assert.match(one.reason!, /1 seed\(s\) in common; a paired test needs 2/);
  assert.deepEqual(one.unmatched, [{ cell: "a", seeds: [0] }, { cell: "b", seeds: [2] }]);
  const twice = pairingOf(
    "avg@k",
    side(cell("a", [0, 0]), [1, 2]),
    side(cell("b", [0, 1]), [1, 2]),
  );
  assert.match(twice.reason!, /a seed has more than one run in a/);
  const unknown = pairingOf("avg@k", side(old, values, null), side(cell("d", [0, 1, 2]), values));
  assert.match(unknown.reason!, /cannot be matched to their seeds/);
});

Deno.test("verdict: the paired test's where paired and defined, else Welch's; one cell stays one-sample", () => {
  const a = cell("a", [0, 1, 2, 3]);
  const b = cell("b", [0, 1, 2, 3]);
  const claim = (expect: Expectation, metric: ClaimMetric = "avg@k") => ({ metric, expect });
  // Welch's p = 0.37, the paired p = 0.006: the paired test decides.
  const x = [0.36, 0.38, 0.36, 0.35];
  const y = [0.37, 0.39, 0.365, 0.36];
  const lower = testClaim(claim("lower"), side(a, x), side(b, y), 0.05);
  assert.equal(lower.decidedBy, "paired");
  assert.equal(lower.verdict, "agrees");
  assert.equal(decidingTest(lower), lower.paired);
  const higher = testClaim(claim("higher"), side(a, x), side(b, y), 0.05);
  assert.equal(higher.verdict, "disagrees");
  // Not paired (other tasks, no hashes): Welch's decides.
  const other = cell("b", [0, 1, 2, 3], { tasks: "math files (x.jsonl)" });
  const welch = testClaim(claim("lower"), side(a, x), side(other, y), 0.05);
  assert.equal(welch.decidedBy, "welch");
  assert.equal(welch.paired, null);
  assert.equal(welch.verdict, "inconclusive");
  assert.equal(decidingTest(welch), welch.test);
  // Every per-seed difference 0: the paired test is undefined (NaN, as scipy), Welch's decides.
  const same = testClaim(claim("not-lower"), side(a, x), side(b, x), 0.05);
  assert.ok(Number.isNaN(same.paired!.p));
  assert.equal(same.decidedBy, "welch");
  assert.equal(same.verdict, "agrees");
  // A one-cell claim: one-sample test against 1.
  const one = testClaim(
    claim("above-one", "lemma-multiplier"),
    side(a, [1.2, 1.4, 1.3, 1.25]),
    null,
    0.05,
  );
  assert.equal(one.decidedBy, "one-sample");
  assert.equal(one.pairing, null);
  assert.equal(one.verdict, "agrees");
  // A claim read from a study.json written before claims were paired: Welch's decided it.
  assert.equal(decidingTest({ test: welch.test }), welch.test);
});

function claimOf(r: StudyResults, cellId: string, against: string, metric: string): ClaimResult {
  return r.comparisons.flatMap((c) => c.claims).find((c) =>
    c.cell === cellId && c.against === against && c.metric === metric && c.agent === null
  )!;
}

Deno.test("v2: every two-cell claim paired by seed from its study.json, as scipy computes it", async () => {
  const file = await v2File();
  const raw = JSON.parse(await Deno.readTextFile(file));
  const v2 = await readStudyResults(file);
  const claims = v2.comparisons.flatMap((c) => c.claims).filter((c) => c.against !== null);
  assert.equal(claims.length, reference.v2.length);
  for (const want of reference.v2) {
    const c = claims.find((x) =>
      x.cell === want.cell && x.against === want.against && x.agent === want.agent &&
      x.metric === want.metric
    )!;
    const what = `${want.cell} vs ${want.against} ${want.agent ?? ""} ${want.metric}`;
    // The fixture holds v2's per-seed values.
    assert.deepEqual(c.value!.samples, want.a, what);
    assert.deepEqual(c.reference!.samples, want.b, what);
    assert.deepEqual(c.value!.seeds, [0, 1, 2, 3]);
    assert.equal(c.pairing!.paired, true, what);
    assert.equal(
      c.pairing!.basis,
      ["avg@k", "pass@k", "critic-improvement"].includes(c.metric) ? "same-tasks" : "seed",
    );
    near(c.paired!.diff, want.diff, 1e-12, `${what} diff`);
    if (want.p === null) {
      assert.ok(Number.isNaN(c.paired!.p) && Number.isNaN(c.test!.p), `${what}: no spread`);
      assert.equal(c.decidedBy, "welch");
      continue;
    }
    near(c.test!.p, want.welch_p, 1e-9, `${what} Welch p`);
    near(c.paired!.p, want.p, 1e-9, `${what} paired p`);
    near(c.paired!.ci[0], want.ci[0], 1e-9, `${what} ci`);
    near(c.paired!.ci[1], want.ci[1], 1e-9, `${what} ci`);
    if (want.r === null || Math.abs(want.r) < 1e-12) {
      assert.ok(c.paired!.correlation === null || Math.abs(c.paired!.correlation) < 1e-12);
    } else near(c.paired!.correlation!, want.r, 1e-9, `${what} r`);
    assert.equal(c.decidedBy, "paired");
  }
  // The two examples.
  const penalty = claimOf(v2, "refine-drmas-penalty", "refine-grpo-penalty", "avg@k");
  assert.equal((100 * penalty.paired!.diff).toFixed(2), "-1.39");
  assert.equal(penalty.paired!.p.toFixed(3), "0.023");
  assert.equal(penalty.test!.p.toFixed(3), "0.114");
  assert.equal(penalty.verdict, "disagrees", "Dr. MAS significantly below GRPO, paired");
  const swap = claimOf(v2, "refine-drmas-hetero-swap", "refine-drmas", "avg@k");
  assert.equal((100 * swap.paired!.diff).toFixed(2), "-1.90");
  assert.equal(swap.paired!.p.toFixed(3), "0.017");
  assert.equal(swap.verdict, "disagrees", "not lower, but significantly lower paired");
  // As v2 published them: Welch's verdicts, stored in the file.
  const published = (cellId: string, against: string) =>
    raw.comparisons.flatMap((c: { claims: ClaimResult[] }) => c.claims).find((c: ClaimResult) =>
      c.cell === cellId && c.against === against && c.metric === "avg@k"
    ).verdict;
  assert.equal(published("refine-drmas-penalty", "refine-grpo-penalty"), "inconclusive");
  assert.equal(published("refine-drmas-hetero-swap", "refine-drmas"), "agrees");
});

Deno.test("incomplete pairs: a seed missing in one cell pairs on the common seeds, and says so", async () => {
  // v2 with refine-grpo-penalty's seed 3 not run.
  const raw = JSON.parse(await Deno.readTextFile(await v2File()));
  const grpo = raw.cells.find((c: { id: string }) => c.id === "refine-grpo-penalty");
  grpo.runs = grpo.runs.slice(0, 3);
  grpo.accuracy.avg.samples = grpo.accuracy.avg.samples.slice(0, 3);
  for (const c of raw.comparisons.flatMap((x: { claims: unknown[] }) => x.claims)) {
    if (c.against === "refine-grpo-penalty" && c.metric === "avg@k") {
      c.reference.samples = c.reference.samples.slice(0, 3);
    }
  }
  const dir = await Deno.makeTempDir({ prefix: "polyrl-paired-" });
  try {
    const file = join(dir, "study.json");
    await Deno.writeTextFile(file, JSON.stringify(raw));
    const r = await readStudyResults(file);
    const c = claimOf(r, "refine-drmas-penalty", "refine-grpo-penalty", "avg@k");
    assert.deepEqual(c.pairing!.seeds, [0, 1, 2]);
    assert.deepEqual(c.pairing!.unmatched, [{ cell: "refine-drmas-penalty", seeds: [3] }]);
    assert.equal(c.paired!.n, 3);
    const want = reference.v2.find((x: { cell: string; metric: string }) =>
      x.cell === "refine-drmas-penalty" && x.metric === "avg@k"
    );
    const d = want.a.slice(0, 3).map((x: number, i: number) => x - want.b[i]);
    near(c.paired!.diff, d.reduce((s: number, x: number) => s + x, 0) / 3, 1e-12, "diff");
    // Welch's test keeps every run of each cell.
    assert.equal(c.value!.n, 4);
    const page = renderStudy(r, [], dir);
    assert.match(
      page,
      /, r = -?\d\.\d\d; on the 3 common seeds \(seed 3 only in refine-drmas-penalty\) \|/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("study.json: the paired fields survive a round trip; the page shows them", async () => {
  const v2 = await readStudyResults(await v2File());
  const dir = await Deno.makeTempDir({ prefix: "polyrl-paired-" });
  try {
    const file = join(dir, "study.json");
    await Deno.writeTextFile(file, JSON.stringify(v2, null, 2));
    const back = await readStudyResults(file);
    const fields = (r: StudyResults) =>
      r.comparisons.flatMap((c) => c.claims).map((c) => ({
        pairing: c.pairing,
        paired: c.paired && { ...c.paired, t: String(c.paired.t), p: String(c.paired.p) },
        decidedBy: c.decidedBy,
        verdict: c.verdict,
        seeds: [c.value?.seeds, c.reference?.seeds],
      }));
    assert.deepEqual(fields(back), fields(v2));
    const page = renderStudy(v2, [], dir);
    assert.match(
      page,
      /\| -1\.39 \[-3\.24, \+0\.45\], p = 0\.114 \| -1\.39 \[-2\.43, -0\.36\], p = 0\.023, r = 0\.81 \| \*\*disagrees\*\* \| paired t \|/,
    );
    assert.match(
      page,
      /\| -1\.90 \[-3\.16, -0\.65\], p = 0\.017, r = 0\.92 \| \*\*disagrees\*\* \| paired t \|/,
    );
    assert.match(page, /\| verdict \| verdict from \| power \(4 seeds\) \|/);
    assert.match(page, /the paired t-test on the per-seed differences \(scipy's ttest_rel\)/);
    assert.match(page, /pair on the cells' tasks: .*so pairing by seed holds for them too/);
    assert.match(page, /\| sd of per-seed differences \| detectable difference \(paired\) \|/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
