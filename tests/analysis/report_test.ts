import assert from "node:assert/strict";
import {
  buildReport,
  renderReport,
  reportCsvTables,
  ReportError,
  type RunSummary,
} from "../../analysis/report/mod.ts";

function run(
  id: string,
  estimator: string,
  seed: number,
  math: number,
  gsm: number,
  extra: Partial<RunSummary> = {},
): RunSummary {
  return {
    runId: id,
    config: { estimator, seed },
    accuracy: { math, gsm8k: gsm },
    gradNorms: [],
    lemma: [],
    critic: [],
    tokensPerQuestion: null,
    turnsPerTrajectory: null,
    trainableParameters: null,
    ...extra,
  };
}

const runs = [
  run("g1", "grpo", 1, 0.40, 0.60),
  run("g2", "grpo", 2, 0.42, 0.62),
  run("g3", "grpo", 3, 0.44, 0.61),
  run("d1", "drmas", 1, 0.45, 0.66),
  run("d2", "drmas", 2, 0.47, 0.65),
  run("d3", "drmas", 3, 0.46, 0.70),
];

const close = (a: number, b: number, tol = 1e-12) =>
  assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${a} != ${b}`);

Deno.test("report: mean ± SEM and Welch against the baseline, checked by hand", () => {
  const r = buildReport(runs, { groupBy: "estimator", baseline: "grpo" });
  assert.deepEqual(r.benchmarks, ["gsm8k", "math", "average"]);
  assert.deepEqual(r.groups.map((g) => g.value), ["drmas", "grpo"]);
  const math = r.accuracy.find((c) => c.group === "grpo" && c.benchmark === "math")!;
  close(math.mean, 0.42);
  // variance of (0.40, 0.42, 0.44) = (0.0004 + 0 + 0.0004) / 2 = 0.0004; SEM = sqrt(0.0004 / 3)
  close(math.sem!, Math.sqrt(0.0004 / 3));
  const vs = r.vsBaseline.find((c) => c.group === "drmas" && c.benchmark === "math")!;
  close(vs.diff, 0.46 - 0.42);
  // drmas math (0.45, 0.47, 0.46): variance 0.0001; Welch t = 0.04 / sqrt(0.0001/3 + 0.0004/3).
  const vA = 0.0001 / 3;
  const vB = 0.0004 / 3;
  close(vs.welch!.t, 0.04 / Math.sqrt(vA + vB), 1e-9);
  close(vs.welch!.df, (vA + vB) ** 2 / (vA ** 2 / 2 + vB ** 2 / 2), 1e-9);
  // average column: per-run mean of the two benchmarks, then mean over runs.
  const avg = r.accuracy.find((c) => c.group === "drmas" && c.benchmark === "average")!;
  close(avg.mean, ((0.45 + 0.66) / 2 + (0.47 + 0.65) / 2 + (0.46 + 0.70) / 2) / 3);
  assert.equal(r.pairwise.length, 2);
  const [ab, ba] = r.pairwise;
  close(ab.diff, -ba.diff);
  close(ab.welch!.p, ba.welch!.p);
});

Deno.test("report: the paired test over shared seeds, checked by hand", () => {
  const r = buildReport(runs, { groupBy: "estimator", baseline: "grpo" });
  const vs = r.vsBaseline.find((c) => c.group === "drmas" && c.benchmark === "math")!;
  // Pairs by seed: drmas (0.45, 0.47, 0.46) - grpo (0.40, 0.42, 0.44) = (0.05, 0.05, 0.02);
  // mean 0.04, variance (0.0001 + 0.0001 + 0.0004) / 2 = 0.0003, SE sqrt(0.0003 / 3) = 0.01.
  const p = vs.paired!;
  assert.equal(p.n, 3);
  close(p.diff, 0.04, 1e-9);
  close(p.se, 0.01, 1e-9);
  close(p.t, 4, 1e-9);
  assert.equal(p.df, 2);
  // r: deviations (-0.01, 0.01, 0) and (-0.02, 0, 0.02): cov 0.0002 / 2, sds 0.01 and 0.02.
  close(p.correlation!, 0.5, 1e-9);
  close(p.seRatio!, vs.welch!.se / 0.01, 1e-9);
  // Runs in another order pair by seed, not by position.
  const shuffled = buildReport([...runs].reverse(), { groupBy: "estimator", baseline: "grpo" });
  const again = shuffled.vsBaseline.find((c) => c.group === "drmas" && c.benchmark === "math")!;
  close(again.paired!.t, 4, 1e-9);
  // Different seeds, or a seed twice: no pairing, Welch only.
  const unpaired = buildReport(
    runs.map((x) =>
      x.config.estimator === "drmas" ? { ...x, config: { ...x.config, seed: 9 } } : x
    ),
    { groupBy: "estimator", baseline: "grpo" },
  );
  assert.equal(unpaired.vsBaseline[0].paired, null);
  assert.ok(unpaired.vsBaseline[0].welch);
  assert.match(renderReport(r, "md"), /paired 95% CI/);
});

Deno.test("report: keys that differ between groups beyond the compared one mark a confound", () => {
  // An RLOO group trained at rank 16 for 3 steps against GRPO and Dr. MAS at rank 8, 5 steps.
  const withSettings = (r: RunSummary, rank: number, steps: number): RunSummary => ({
    ...r,
    config: { ...r.config, "agents.0.trainable.rank": rank, steps, name: `${r.runId}-label` },
  });
  const mixed = [
    ...runs.map((r) => withSettings(r, 8, 5)),
    withSettings(run("r1", "rloo", 1, 0.5, 0.6), 16, 3),
    withSettings(run("r2", "rloo", 2, 0.5, 0.6), 16, 3),
  ];
  const r = buildReport(mixed, { groupBy: "estimator", baseline: "grpo" });
  // Seeds and names differ by design and are no confound; rank and steps are.
  assert.deepEqual(r.configDifferences.map((d) => d.key), ["agents.0.trainable.rank", "steps"]);
  assert.deepEqual(r.configDifferences[0].values, { drmas: ["8"], grpo: ["8"], rloo: ["16"] });
  const vs = (group: string) => r.vsBaseline.find((c) => c.group === group)!;
  assert.deepEqual(vs("drmas").confounds, []);
  assert.deepEqual(vs("rloo").confounds, ["agents.0.trainable.rank", "steps"]);
  const md = renderReport(r, "md");
  assert.match(md, /## What else differs between the groups/);
  assert.match(md, /\| agents\.0\.trainable\.rank \| 8 \| 8 \| 16 \|/);
  assert.match(md, /\| rloo \| gsm8k \|.*\| agents\.0\.trainable\.rank, steps \|/);
  // Groups that differ only in the grouping key say so.
  assert.match(
    renderReport(buildReport(runs, { groupBy: "estimator", baseline: "grpo" }), "md"),
    /Nothing: the groups' configs differ only in `estimator`/,
  );
});

Deno.test("report: stability, Lemma and cost tables", () => {
  const withCost = [
    run("g1", "grpo", 1, 0.4, 0.6, {
      gradNorms: [{ wg: "wg0", norms: [1, 2, 1, 30, NaN] }],
      lemma: [{ agent: "solver", multipliers: [1, 3] }],
      tokensPerQuestion: 100,
      turnsPerTrajectory: 2,
      trainableParameters: 1000,
    }),
    run("d1", "drmas", 1, 0.5, 0.7, {
      gradNorms: [{ wg: "wg0", norms: [2, 2, 2] }],
      lemma: [{ agent: "solver", multipliers: [1, 1] }],
      tokensPerQuestion: 300,
      turnsPerTrajectory: 3,
      trainableParameters: 500,
    }),
  ];
  const r = buildReport(withCost, { groupBy: "estimator", baseline: "grpo", spikeMultiple: 10 });
  const g = r.stability.find((s) => s.group === "grpo")!;
  assert.deepEqual([g.spikes, g.nonFinite], [1, 1]);
  close(g.median, 1.5);
  close(r.lemma.find((l) => l.group === "grpo")!.multiplier, 2);
  const d = r.cost.find((c) => c.group === "drmas")!;
  close(d.gainPerParameter!, (0.6 - 0.5) / 500);
  assert.equal(r.cost.find((c) => c.group === "grpo")!.gainPerParameter, null);
  // single runs: no SEM, no test, but the difference is still reported.
  assert.equal(r.vsBaseline[0].welch, null);
  const md = renderReport(r, "md");
  assert.match(md, /\| drmas \| 1 \| 70\.00 \| 50\.00 \| 60\.00 \|/);
  assert.match(md, /\| drmas \| gsm8k \| \+10\.00 \| n\/a \|/);
});

Deno.test("report: markdown, CSV tables and JSON render the same numbers", () => {
  const r = buildReport(runs, { groupBy: "estimator", baseline: "grpo" });
  const md = renderReport(r, "md");
  assert.match(md, /^# Report: runs grouped by `estimator`/);
  assert.match(md, /\| grpo \| 3 \| 61\.00 ± 0\.58 \| 42\.00 ± 1\.15 \| 51\.50 ± 0\.76 \|/);
  const tables = new Map(reportCsvTables(r).map((t) => [t.name, t.csv]));
  assert.deepEqual([...tables.keys()], [
    "runs",
    "accuracy",
    "config_differences",
    "vs_baseline",
    "vs_baseline_by_problem",
    "problem_pairs",
    "pairwise",
    "stability",
    "lemma",
    "critic",
    "cost",
  ]);
  const accuracy = tables.get("accuracy")!.trim().split("\n");
  assert.equal(accuracy[0], "group,benchmark,n,mean,sem");
  assert.equal(accuracy.length, 1 + r.accuracy.length);
  assert.equal(accuracy.find((l) => l.startsWith("grpo,math,"))!.split(",")[3], String(0.42));
  // An empty table is its header alone.
  assert.equal(
    tables.get("critic"),
    "group,round,runs,improvement_rate,improvement_sem," +
      "degradation_rate,accuracy\n",
  );
  const json = JSON.parse(renderReport(r, "json"));
  assert.equal(json.baseline, "grpo");
  assert.equal(json.vsBaseline.length, 3);
  assert.equal(json.vsBaselineEmpty, null);
});

Deno.test("report: columns at another k or benchmark are kept apart, never averaged", () => {
  const wide = {
    ...run("w", "drmas", 4, 0, 0),
    accuracy: { "math avg@16": 0.9, "gsm8k avg@16": 0.8 },
  };
  const k4 = runs.map((x) => ({
    ...x,
    accuracy: { "math avg@4": x.accuracy.math, "gsm8k avg@4": x.accuracy.gsm8k },
  }));
  const r = buildReport([...k4, wide], { groupBy: "estimator", baseline: "grpo" });
  assert.deepEqual(r.benchmarks, ["gsm8k avg@4", "gsm8k avg@16", "math avg@4", "math avg@16"]);
  assert.deepEqual(r.averageOf, []);
  const d4 = r.accuracy.find((c) => c.group === "drmas" && c.benchmark === "math avg@4")!;
  assert.deepEqual(d4.samples, [0.45, 0.47, 0.46]);
  const d16 = r.accuracy.find((c) => c.group === "drmas" && c.benchmark === "math avg@16")!;
  assert.deepEqual(d16.samples, [0.9]);
  // Against the baseline only where both have the column; no average, so no pairwise matrix.
  assert.deepEqual(r.vsBaseline.map((c) => c.benchmark), ["gsm8k avg@4", "math avg@4"]);
  assert.equal(r.pairwise.length, 0);
  assert.match(r.pairwiseEmpty!, /share no benchmark at the same k/);
  const md = renderReport(r, "md");
  assert.match(md, /\| drmas \| 4 \| 67\.00 ± 1\.53 \(n=3\) \| 80\.00 \(n=1\) \|/);
  assert.match(md, /No column is shared by every run, so there is no average column/);
  // The average is over the columns every run has when they share some.
  const partial = buildReport([...runs, {
    ...run("y", "grpo", 5, 0.5, 0.5),
    accuracy: { math: 0.5, extra: 1 },
  }], {
    groupBy: "estimator",
  });
  assert.deepEqual(partial.averageOf, ["math"]);
  const avg = partial.accuracy.find((c) => c.group === "grpo" && c.benchmark === "average")!;
  assert.deepEqual(avg.samples, [0.40, 0.42, 0.44, 0.5]);
});

Deno.test("report: empty comparisons say why; a missing key is named", () => {
  const ppo = buildReport(runs, { groupBy: "estimator", baseline: "ppo" });
  assert.equal(ppo.vsBaseline.length, 0);
  assert.equal(
    ppo.vsBaselineEmpty,
    "no selected run has estimator=ppo; the selected groups are drmas, grpo",
  );
  const alone = buildReport(runs.slice(0, 3), { groupBy: "estimator" });
  assert.match(alone.vsBaselineEmpty!, /^only estimator=grpo is selected/);
  assert.equal(alone.pairwiseEmpty, "only one group is selected");
  assert.match(renderReport(alone, "md"), /## Against the baseline \(grpo\)\n\n_Empty: only/);
  const unevaluated = { ...run("u", "drmas", 9, 0, 0), accuracy: {} };
  const apart = buildReport([...runs.slice(0, 3), unevaluated], { groupBy: "estimator" });
  assert.deepEqual(apart.unevaluated, ["u"]);
  assert.equal(apart.vsBaselineEmpty, "the baseline's runs (estimator=drmas) have no evaluation");
  const onlyGsm = { ...run("v", "drmas", 9, 0, 0), accuracy: { gsm8k: 0.5 } };
  const onlyMath = runs.slice(0, 3).map((x) => ({ ...x, accuracy: { math: x.accuracy.math } }));
  assert.equal(
    buildReport([...onlyMath, onlyGsm], { groupBy: "estimator", baseline: "grpo" })
      .vsBaselineEmpty,
    "no benchmark at the same k is shared: the baseline estimator=grpo has [math], " +
      "estimator=drmas has [gsm8k]",
  );
  assert.throws(
    () => buildReport(runs, { groupBy: "workflow" }),
    (e) => e instanceof ReportError && /run g1 has no config key workflow/.test(e.message),
  );
});
