/**
 * The study's numbers, verdicts, page and figures from synthetic runs with known values (the end
 * to end test covers the store path; here every branch gets data that is not all zero).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { CriticRoundEffect } from "../../analysis/stats/mod.ts";
import type { StreamHead } from "../../events/mod.ts";
import { loadGrid } from "../../study/load-grid.ts";
import { type PlannedRun, planRuns, planStarts } from "../../study/plan-runs.ts";
import type { ReplayRecord } from "../../study/replay-records.ts";
import { renderStudy } from "../../study/render-study.ts";
import { studyCharts } from "../../study/study-charts.ts";
import type { StudyRun } from "../../study/study-data.ts";
import { readStudyResults, withPreviousStudy } from "../../study/read-study-results.ts";
import { previousStudy } from "../../study/previous-study.ts";
import {
  claimAgents,
  type StudyResults,
  studyResults,
  unionSeconds,
} from "../../study/study-results.ts";

const critic = (round: number, improvementRate: number): CriticRoundEffect => ({
  kind: "critic-round-effect",
  round,
  questions: 10,
  wrongConsensus: 5,
  wrongToRight: improvementRate * 10,
  rightToWrong: 0,
  improvementRate,
  degradationRate: 0,
  correctionRate: improvementRate * 2,
  accuracy: 0.5,
});

interface Values {
  avg: number;
  pass: number;
  norms: Record<string, number[]>;
  multipliers?: Record<string, number[]>;
  critic?: CriticRoundEffect[];
  /** The SHA-256 of the run's validation problems (default: its cell's, the same every seed). */
  sha?: string;
}

/** A fake SHA-256: 64 hex digits of one character. */
const sha = (hex: string) => hex.repeat(64);

function studyRun(run: PlannedRun, v: Values): StudyRun {
  const summary = (accuracy: number) => ({
    runId: run.runId,
    config: { estimator: run.config.estimator.kind },
    accuracy: { validation: accuracy },
    gradNorms: Object.entries(v.norms).map(([wg, norms]) => ({ wg, norms })),
    lemma: Object.entries(v.multipliers ?? {}).map(([agent, multipliers]) => ({
      agent,
      multipliers,
    })),
    critic: v.critic ?? [],
    tokensPerQuestion: 100,
    turnsPerTrajectory: 3,
    trainableParameters: 1000,
  });
  const steps = (xs: number[]) => xs.map((_, i) => i);
  return {
    runId: run.runId,
    cell: run.cell.id,
    seed: run.seed,
    config: run.config as unknown as Record<string, unknown>,
    runtime: {
      deno: "2.9.6",
      onnxruntime: "onnxruntime-node@1.30.0",
      executionProvider: "cpu",
      threads: 1,
      os: "linux",
      arch: "x86_64",
    },
    codeVersion: "abc",
    benchmarks: {
      validation: {
        problems: 4,
        sha256: v.sha ?? sha(run.cell.id === "g" || run.cell.id === "d" ? "a" : "b"),
      },
    },
    avg: summary(v.avg),
    pass: summary(v.pass),
    gradNorms: Object.entries(v.norms).map(([agent, values]) => ({
      agent,
      steps: steps(values),
      values,
    })),
    multipliers: Object.entries(v.multipliers ?? {}).map(([agent, values]) => ({
      agent,
      steps: steps(values),
      values,
    })),
    unboundedMultipliers: { solver: 2 },
    seconds: 60 + run.seed,
    startedMs: 1_700_000_000_000 + 100_000 * run.seed,
    endedMs: 1_700_000_060_000 + 100_000 * run.seed + 1000 * run.seed,
  };
}

/** What a synthetic study adds to its grid and runs. */
interface Extra {
  /** Fields of each cell's grid entry, by id (`start`). */
  cells?: Record<string, Record<string, unknown>>;
  /** The completed start runs' values, by the cell whose config they run. */
  starts?: Record<string, Values>;
}

/**
 * A grid of four synthetic cells (refine g/d, debate e/f) and its results over 3 seeds. Every run
 * of g and d is evaluated on one problem set (SHA-256 "aa..."), e and f on another ("bb...").
 */
async function syntheticStudy(gridExtra: Record<string, unknown> = {}, extra: Extra = {}) {
  const dir = await Deno.makeTempDir();
  const write = (name: string, body: unknown) =>
    Deno.writeTextFile(join(dir, name), JSON.stringify(body));
  await write("g.json", {
    extends: "smoke",
    estimator: { kind: "grpo" },
    updates: { mini_batches: 2 },
    loss: { clip_eps_high: 0.28 },
  });
  // d sets its steps (the smoke preset's 2) itself: a cell's own key.
  await write("d.json", { extends: "smoke", steps: 2 });
  await write("e.json", { extends: "debate-mada" });
  await write("f.json", { extends: "debate-mada", estimator: { kind: "grpo" } });
  await write("grid.json", {
    title: "Synthetic",
    cells: ["g", "d", "e", "f"].map((id) => ({
      id,
      title: id,
      config: `${id}.json`,
      ...extra.cells?.[id],
    })),
    comparisons: [
      {
        id: "x",
        title: "D vs G",
        baseline: "g",
        cells: ["d"],
        charts: ["grad-norm", "lemma-multiplier"],
        claims: [
          { cell: "d", metric: "avg@k", expect: "higher", paper: "+5.6% avg" },
          { cell: "d", metric: "pass@k", expect: "higher", paper: "+4.6% pass" },
          { cell: "d", metric: "grad-norm-max-over-median", expect: "lower", paper: "no spikes" },
          { cell: "d", metric: "grad-norm-spikes", expect: "lower", paper: "no spikes" },
          { cell: "g", metric: "lemma-multiplier", expect: "not-one", paper: "Lemma 4.2" },
        ],
      },
      {
        id: "y",
        title: "E vs F",
        baseline: "f",
        cells: ["e"],
        charts: ["critic-improvement"],
        note: "A note.",
        claims: [{ cell: "e", metric: "critic-improvement", expect: "higher", paper: "19.6%" }],
      },
    ],
    ...gridExtra,
  });
  const grid = await loadGrid(join(dir, "grid.json"));
  const plan = await planRuns(grid.cells, { seeds: 3, store: "s.sqlite" });
  const byCell = (id: string) => plan.filter((p) => p.cell.id === id);
  const values: Record<string, Values[]> = {
    g: [
      {
        avg: 0.40,
        pass: 0.80,
        norms: { solver: [1, 1, 50, 1], verifier: [0, 2, 2, 2] },
        multipliers: { solver: [1.5, 1.5], verifier: [1, 1.2] },
        critic: [critic(1, 0.9)],
      },
      {
        avg: 0.42,
        pass: 0.80,
        norms: { solver: [1, 1, 1, 60], verifier: [2, 2, 3, 2] },
        multipliers: { solver: [1.6, NaN], verifier: [0.9, 1] },
      },
      {
        avg: 0.41,
        pass: 0.85,
        norms: { solver: [0, 1, 1, 40], verifier: [2, 4, 2, 2] },
        multipliers: { solver: [1.4, 1.4], verifier: [1.1, 1] },
      },
    ],
    d: [
      { avg: 0.50, pass: 0.80, norms: { solver: [1, 1.2, 0.9, 1], verifier: [2, 2, 2, 2] } },
      { avg: 0.52, pass: 0.85, norms: { solver: [1, 1, 1.1, 1], verifier: [2, 2, 3, 2] } },
      { avg: 0.51, pass: 0.80, norms: { solver: [1, 1, 1, 1.3], verifier: [NaN, 2, 2, 2] } },
    ],
    e: [0.30, 0.32, 0.34].map((r) => ({
      avg: 0.5,
      pass: 0.9,
      norms: { "critic-1": [1, 1] },
      critic: [critic(1, r)],
    })),
    f: [0.10, 0.12].map((r) => ({
      avg: 0.5,
      pass: 0.9,
      norms: { "critic-1": [1, 1] },
      critic: [critic(1, r)],
    })),
  };
  // f's third seed has not run yet.
  const runs = Object.entries(values).flatMap(([id, vs]) =>
    vs.map((v, i) => studyRun(byCell(id)[i], v))
  );
  const head = (run: PlannedRun, hash: string): [string, StreamHead] => [
    run.runId,
    { stream: run.runId, version: 100, hash, position: 1 },
  ];
  const record = (run: PlannedRun, headHash: string): ReplayRecord => ({
    cell: run.cell.id,
    runId: run.runId,
    version: 100,
    headHash,
    ok: true,
    mode: "exact",
    compared: 99,
    identical: 99,
    identicalThrough: 1,
    firstDivergence: null,
    backend: "cpu",
    seconds: 5,
    error: null,
  });
  const starts = await planStarts(grid.cells, { store: "s.sqlite" });
  const startRuns = starts.flatMap((s) => {
    const v = extra.starts?.[s.cell.id];
    return v ? [studyRun(s, v)] : [];
  });
  const results = studyResults({
    grid,
    plan,
    runs,
    starts,
    startRuns,
    replays: [record(byCell("g")[0], "h-g"), record(byCell("d")[0], "old")],
    heads: new Map([head(byCell("g")[0], "h-g"), head(byCell("d")[0], "h-d")]),
    hardware: { cpuModel: "Test CPU", cores: 2, os: "linux", arch: "x86_64" },
    store: "s.sqlite",
    seeds: 3,
  });
  return { dir, grid, results, byCell, starts };
}

Deno.test("study results: statistics, verdicts, replay states, page and figures", async () => {
  const { dir, results, byCell } = await syntheticStudy();
  const cell = (id: string) => results.cells.find((c) => c.id === id)!;

  // Accuracy: mean, SEM, t-based CI over the three seeds.
  const g = cell("g").accuracy.avg;
  assert.ok(Math.abs(g.mean! - 0.41) < 1e-12);
  assert.ok(Math.abs(g.sem! - 0.01 / Math.sqrt(3)) < 1e-12);
  assert.ok(Math.abs(g.ci![1] - (0.41 + 4.302652729911275 * 0.01 / Math.sqrt(3))) < 1e-9);
  assert.deepEqual(cell("f").pending, [byCell("f")[2].runId]);
  assert.equal(cell("f").runs.length, 2);

  // Per-agent stability: zero steps left out, max/median per run, spikes per run.
  const solver = cell("g").agents.find((a) => a.agent === "solver")!;
  assert.equal(solver.zeroSteps, 1);
  assert.deepEqual(solver.maxOverMedian.samples, [50, 60, 40]);
  assert.deepEqual(solver.spikesPerRun.samples, [1, 1, 1]);
  assert.equal(solver.unboundedMultipliers, 6);
  assert.ok(Math.abs(solver.multiplier.samples[1] - 1.6) < 1e-12, "NaN steps left out");
  assert.equal(cell("d").agents.find((a) => a.agent === "verifier")!.nonFinite, 1);
  // Rounds of a refine run are not critic rounds; a debate's are.
  assert.deepEqual(cell("g").critic, []);
  assert.deepEqual(cell("e").critic.map((r) => r.round), [1]);

  const verdicts = Object.fromEntries(
    results.comparisons.flatMap((c) => c.claims).map((c) => [
      `${c.metric}${c.agent ? `:${c.agent}` : ""}`,
      c.verdict,
    ]),
  );
  assert.deepEqual(verdicts, {
    "avg@k": "agrees",
    "pass@k": "inconclusive",
    "grad-norm-max-over-median:solver": "agrees",
    "grad-norm-max-over-median:verifier": "inconclusive",
    "grad-norm-spikes:solver": "agrees",
    "grad-norm-spikes:verifier": "not testable",
    "lemma-multiplier:solver": "agrees",
    "lemma-multiplier:verifier": "inconclusive",
    "critic-improvement": "agrees",
  });
  const avgClaim = results.comparisons[0].claims[0];
  assert.ok(Math.abs(avgClaim.test!.diff - 0.1) < 1e-12);
  assert.equal(avgClaim.against, "g");

  assert.deepEqual(results.replays.map((r) => r.status), [
    "identical",
    "stale",
    "not checked",
    "not checked",
  ]);
  assert.equal(results.time.runs, 11);
  assert.equal(results.time.replaySeconds, 5);
  assert.deepEqual(results.software.executionProvider, ["cpu"]);

  const charts = studyCharts(results);
  assert.deepEqual(charts.map((c) => c.file), [
    "accuracy.svg",
    "x-grad-norm-solver.svg",
    "x-grad-norm-verifier.svg",
    "x-lemma-multiplier.svg",
    "y-critic-improvement.svg",
  ]);
  const page = renderStudy(results, charts, join(dir, "out"));
  assert.match(page, /^# Synthetic\n/);
  assert.match(page, /9 checks: 5 agrees, 3 inconclusive, 1 not testable\./);
  assert.match(page, /\| avg@2 of d higher than g \| \+5\.6% avg \| 51\.00 ± 0\.58 /);
  assert.match(page, /\*\*agrees\*\*/);
  assert.match(page, /\[g\.json\]\(\.\.\/g\.json\)|\(\.\.\/g\.json\)/);
  assert.match(page, /A note\./);
  assert.match(page, /!\[[^\]]*\]\(y-critic-improvement\.svg\)/);
  assert.match(page, /checked run changed since its replay/);
  assert.match(page, /Test CPU, 2 logical cores/);
  assert.match(page, /\| f \| 2 \| /);
  // The update scheme of each cell, as its runs recorded it.
  assert.match(page, /\| cell \| batch per step \| updates per batch; loss \| sampling \|/);
  assert.match(
    page,
    /\| g \| [^|]+ \| 2 mini-batches × 1 epoch; clip 0\.2\/0\.28, KL 0, token-mean \|/,
  );
  assert.match(page, /\| d \| [^|]+ \| 1 mini-batch × 1 epoch; clip 0\.2, KL 0, token-mean \|/);
  assert.equal(renderStudy(results, charts, join(dir, "out")), page, "deterministic");
});

/**
 * An earlier study as v2's study.json holds it: claims decided by Welch's test with no paired
 * fields, cells without start runs, benchmark hashes, preset or config.
 */
function asV2(r: StudyResults): Record<string, unknown> {
  const json = JSON.parse(JSON.stringify(r));
  for (const c of json.cells) {
    for (const key of ["start", "benchmarks", "follows", "config"]) delete c[key];
    c.setup.rewards = undefined;
    for (const run of c.runs) delete run.benchmarks;
  }
  for (const comparison of json.comparisons) {
    for (const c of comparison.claims) {
      for (const key of ["pairing", "paired", "decidedBy", "sameBenchmark"]) delete c[key];
    }
  }
  return json;
}

Deno.test("changes from v2: setup changes once each, causes of every moved verdict, cells not rerun", async () => {
  const note = "the estimator fix removed the eps division";
  const { dir, grid, results } = await syntheticStudy({
    previous: { results: "v2/study.json", title: "v2", changes: ["a new base model"] },
  });
  const cell = (id: string) => results.cells.find((c) => c.id === id)!;
  // This study: d's pass@k decided by the paired test, which agrees where Welch's does not.
  const current: StudyResults = {
    ...results,
    comparisons: results.comparisons.map((c) => ({
      ...c,
      claims: c.claims.map((x) =>
        x.metric === "pass@k"
          ? {
            ...x,
            test: { ...x.test!, p: 0.3 },
            paired: { ...x.test!, p: 0.01, n: 3, correlation: 0.9, seRatio: 3 },
            decidedBy: "paired" as const,
            verdict: "agrees" as const,
          }
          : x
      ),
    })),
  };
  // v2: 4 seeds, no benchmark hashes; g on other tasks (difficulty 2), with another sigma and 16
  // samples per problem; d for 5 steps (a key d's own file sets); a cell h this grid does not run.
  const v2 = asV2(current) as unknown as StudyResults;
  const setupOf = (id: string) => cell(id).setup;
  const earlier = {
    ...v2,
    seeds: 4,
    cells: [
      ...v2.cells.map((c) =>
        c.id === "g"
          ? {
            ...c,
            k: 16,
            setup: {
              ...c.setup,
              estimator: "grpo (unbiased σ)",
              tasks: setupOf("g").tasks.replace("difficulty 1", "difficulty 2"),
              evaluation: "validation × 16 samples per problem",
              // v1 did not state the update scheme: no change to show.
              updates: undefined,
            },
          }
          : c.id === "d"
          ? { ...c, setup: { ...c.setup, steps: 5 } }
          : c
      ),
      { ...v2.cells[0], id: "h" },
    ],
    comparisons: v2.comparisons.map((c) => ({
      ...c,
      claims: [
        ...c.claims.filter((x) => x.metric !== "lemma-multiplier").map((x) => {
          if (x.metric === "avg@k") {
            return {
              ...x,
              verdict: "disagrees" as const,
              test: { ...x.test!, diff: -0.05, p: 0.01 },
            };
          }
          if (x.metric === "pass@k") return { ...x, verdict: "inconclusive" as const };
          // v2's verifier spikes: a verdict then, none to test now (no spread) is a change too.
          if (x.verdict === "not testable") {
            return { ...x, verdict: "agrees" as const, test: { ...x.test!, diff: -4, p: 0.01 } };
          }
          return x;
        }),
        ...(c.id === "x"
          ? [
            // A claim of cells both studies ran that this grid no longer makes.
            { ...c.claims[0], cell: "g", against: "d", paper: "dropped" },
            // A claim of a cell this grid does not run.
            { ...c.claims[0], cell: "h", against: "g", paper: "of h", verdict: "agrees" as const },
          ]
          : []),
      ],
    })),
  };
  await Deno.mkdir(join(dir, "v2"));
  const file = join(dir, "v2", "study.json");
  await Deno.writeTextFile(file, JSON.stringify(earlier));
  const withNote = {
    ...grid,
    comparisons: grid.comparisons.map((c) => ({
      ...c,
      claims: c.claims.map((x) => x.metric === "avg@k" ? { ...x, since_previous: note } : x),
    })),
  };
  const compared = await withPreviousStudy(current, withNote);
  const p = compared.previous!;
  assert.equal(p.title, "v2");
  assert.deepEqual(p.seeds, { before: 4, after: 3 });

  // Each change once, with its cells, in cause order: v2 recorded no benchmark hash, so every
  // cell with one changed benchmark (g and d share theirs: one change).
  const changes = p.setupChanges!.map((s) => [s.id, s.cause, s.key, s.cells.join(",")]);
  assert.deepEqual(changes, [
    ["S1", "benchmark", "evaluation", "g"],
    ["S2", "benchmark", "benchmark", "g,d"],
    ["S3", "benchmark", "benchmark", "e,f"],
    ["S4", "difficulty", "tasks", "g"],
    ["S5", "preset", "estimator", "g"],
    ["S6", "cell-config", "steps", "d"],
  ]);
  const s2 = p.setupChanges!.find((s) => s.id === "S2")!;
  assert.equal(s2.before, "not recorded");
  assert.equal(
    s2.after,
    `validation ${"a".repeat(12)} (4 problems), the same for every seed`,
  );

  const claim = (metric: string, cellId = "d") =>
    p.claims.find((c) => c.metric === metric && c.cell === cellId && c.before !== null)!;
  // The data moved d's avg@k (Welch's verdict moved too): its cells' setup changes are the causes.
  const avg = claim("avg@k");
  assert.equal(avg.changed, true);
  assert.equal(avg.before!.verdict, "disagrees");
  assert.equal(avg.before!.decidedBy, "welch", "v2's verdict as published: Welch's");
  assert.equal(avg.after!.verdict, "agrees");
  assert.equal(avg.before!.k, 2, "the k of the tested cell d, not of g");
  assert.deepEqual(avg.causes, ["benchmark", "difficulty", "preset", "cell-config"]);
  assert.deepEqual(avg.setupChanges, ["S1", "S2", "S4", "S5", "S6"]);
  assert.equal(avg.note, note);
  // The paired test alone moved pass@k: Welch's verdict on the same runs is v2's.
  const pass = claim("pass@k");
  assert.equal(pass.changed, true);
  assert.equal(pass.after!.welchVerdict, "inconclusive");
  assert.deepEqual(pass.causes, ["paired-test"]);
  assert.equal(pass.after!.p, 0.01, "the p of the test that decided");
  // Spikes: a verdict then, not testable now.
  const spikes = p.claims.find((c) => c.after?.verdict === "not testable" && c.before)!;
  assert.equal(spikes.changed, true);
  assert.deepEqual(spikes.causes, ["benchmark", "difficulty", "preset", "cell-config"]);
  // h is not in this grid: its claim is not rerun; a claim no longer made is not "not rerun".
  const ofH = p.claims.find((c) => c.paper === "of h")!;
  assert.deepEqual(ofH.notRerun, ["h"]);
  assert.equal(ofH.after, null);
  const dropped = p.claims.find((c) => c.paper === "dropped")!;
  assert.deepEqual(dropped.notRerun, []);
  assert.equal(dropped.changed, false);
  assert.deepEqual(p.claims.filter((c) => c.before === null).map((c) => c.agent), [
    "solver",
    "verifier",
  ]);

  const page = renderStudy(compared, studyCharts(compared), join(dir, "out"));
  assert.match(page, /## Changes from v2\n/);
  assert.match(page, /\(\.\.\/v2\/study\.json\)/);
  assert.match(
    page,
    /3 of the 7 claims rerun here moved; 1 are not rerun \(a cell is not in this grid\), 1 are no longer made; 2 claims are new/,
  );
  assert.match(page, /- a new base model\n- Seeds per cell: 4 → 3\./);
  assert.match(
    page,
    /\| S5 \| preset \| estimator \| grpo \(unbiased σ\) \| grpo \(population σ\) \| g \|/,
  );
  assert.match(page, /\| S6 \| cell config \| steps \| 5 \| 2 \| d \|/);
  assert.match(
    page,
    new RegExp(
      `\\| avg@2 of d higher than g \\| \\*\\*disagrees\\*\\* \\(-5\\.00, p = 0\\.010; k = 2\\) \\| ` +
        `\\*\\*agrees\\*\\* \\(\\+10\\.00, p = [^;]+; k = 2\\) \\| benchmark \\(S1, S2\\); ` +
        `difficulty \\(S4\\); preset \\(S5\\); cell config \\(S6\\)\\. ${note}\\. \\|`,
    ),
  );
  assert.match(
    page,
    /\| pass@2 of d higher than g \| inconclusive \([^)]*\) \| \*\*agrees\*\* \([^)]*p = 0\.010 paired; k = 2\) \| paired test \(Welch: inconclusive\)\. \|/,
  );
  assert.match(page, /\| avg@2 of h higher than g \| \*\*agrees\*\* \([^)]*\) \| h \|/);
  assert.match(page, /No longer claimed by this grid: avg@16 of g higher than d \(agrees\)\./);
  // The setup lines are not repeated per claim.
  assert.doesNotMatch(page, /setup: g /);
  // A grid without a previous study renders no such section.
  assert.doesNotMatch(renderStudy(results, studyCharts(results), dir), /Changes from/);
  // Re-rendering the earlier study from its own file keeps the comparison it holds.
  const own = { ...current, previous: null };
  assert.equal((await withPreviousStudy(own, withNote, file)).previous, null);
  // The earlier file unreadable: the error names it and the fix.
  await Deno.remove(file);
  await assert.rejects(() => withPreviousStudy(current, withNote), /v2\/study\.json/);
});

Deno.test("changes from a study that recorded its configs: key by key, agents' keys once", async () => {
  const { grid, results } = await syntheticStudy({
    previous: { results: "v3/study.json", title: "v3", changes: [] },
  });
  type Config = Record<string, Record<string, unknown> & { optimizer?: Record<string, unknown> }>;
  const earlierConfig = (id: string, config: Config) => {
    const c = structuredClone(config) as Config & { agents: Config[string][] };
    (c.estimator as Record<string, unknown>).eps = 1e-8;
    if (id === "g") {
      (c.estimator as Record<string, unknown>).sigma = "unbiased";
      c.tasks.difficulty = 3;
      (c.tasks.splits as Record<string, unknown>).validation = 8;
      for (const a of c.agents) a.optimizer!.lr = 0.5;
    }
    if (id === "d") (c as Record<string, unknown>).steps = 7;
    return c;
  };
  const earlier: StudyResults = {
    ...results,
    cells: results.cells.map((c) =>
      c.id === "g" || c.id === "d"
        ? { ...c, config: earlierConfig(c.id, c.config as unknown as Config) }
        : c
    ),
  };
  const p = previousStudy(results, earlier, "v3/study.json", grid);
  const changes = p.setupChanges!.map((s) => [s.cause, s.key, s.before, s.after, s.cells.join()]);
  const lr = String(results.cells[0].setup.lr);
  // Agents' keys once for all of them (worker groups, derived from them, not again); eps,
  // changed alike in g and d, once.
  assert.deepEqual(changes, [
    ["benchmark", "tasks.splits.validation", "8", "4", "g"],
    ["difficulty", "tasks.difficulty", "3", "1", "g"],
    ["preset", "agents.*.optimizer.lr", "0.5", lr, "g"],
    ["preset", "estimator.sigma", "unbiased", "population", "g"],
    ["preset", "estimator.eps", "1e-8", "0.000001", "g,d"],
    ["cell-config", "steps", "7", "2", "d"],
  ]);
  assert.deepEqual(p.seeds, null);
  // No verdict moved: nothing to explain.
  assert.ok(p.claims.every((c) => !c.changed && c.causes.length === 0));
});

Deno.test("start runs, benchmark hashes and presets per cell, in study.json and the setup", async () => {
  // g and d start from the same team (g's start run), e and f from e's; e's start run pending.
  const { dir, results, starts } = await syntheticStudy({}, {
    cells: { g: { start: "g" }, d: { start: "g" }, e: { start: "e" }, f: { start: "e" } },
    starts: { g: { avg: 0.2, pass: 0.5, norms: {} } },
  });
  assert.deepEqual(starts.map((s) => [s.cell.id, s.cells, s.seed, s.config.steps]), [
    ["g", ["g", "d"], 0, 0],
    ["e", ["e", "f"], 0, 0],
  ]);
  const cell = (id: string) => results.cells.find((c) => c.id === id)!;
  const g = cell("g").start!;
  assert.deepEqual([g.cell, g.complete, g.avg, g.pass, g.sameBenchmark], [
    "g",
    true,
    0.2,
    0.5,
    true,
  ]);
  assert.match(g.runId, /^g-start-[0-9a-f]{8}$/);
  assert.equal(cell("d").start!.runId, g.runId, "d shares g's start run");
  assert.deepEqual(cell("f").start, { ...cell("e").start!, sharedWith: ["e", "f"] });
  assert.equal(cell("e").start!.complete, false);
  assert.equal(cell("e").start!.avg, null);
  assert.equal(results.time.startRuns, 1);

  // Benchmarks: one problem set for every seed of g; its full hash in study.json.
  assert.deepEqual(cell("g").benchmarks, [
    { name: "validation", sets: [{ sha256: sha("a"), problems: 4, seeds: [0, 1, 2] }] },
  ]);
  const claims = results.comparisons.flatMap((c) => c.claims);
  const same = (metric: string) => claims.find((c) => c.metric === metric)!.sameBenchmark;
  assert.equal(same("avg@k"), true, "d and g evaluated on the same problems");
  assert.equal(same("lemma-multiplier"), null, "a one-cell claim");
  // Presets and what they follow; the config as recorded, without seed and store.
  assert.equal(cell("e").follows!.preset, "debate-mada");
  assert.match(cell("e").follows!.reference!, /MADA-RL paper/);
  assert.deepEqual(cell("d").follows!.ownKeys, ["steps"]);
  assert.equal(cell("g").config!.seed, undefined);
  assert.equal(cell("g").config!.store, undefined);
  assert.equal((cell("g").config!.estimator as { kind: string }).kind, "grpo");

  const page = renderStudy(results, studyCharts(results), join(dir, "out"));
  assert.match(
    page,
    /\| cell \| follows \| benchmark \| start run \| k \| start avg@k \| end avg@k \| start pass@k \| end pass@k \|/,
  );
  assert.match(
    page,
    new RegExp(
      `\\| g \\| smoke \\(none\\) \\| validation ${"a".repeat(12)} \\(4 problems\\) \\| ` +
        `own \\(g-start-[0-9a-f]{8}\\) \\| 2 \\| 20\\.00 \\| 41\\.00 \\| 50\\.00 \\| 81\\.67 \\|`,
    ),
  );
  assert.match(
    page,
    /\| d \| smoke \(none\) \| [^|]+ \| g's \| 2 \| 20\.00 \| 51\.00 \| 50\.00 \| 81\.67 \|/,
  );
  assert.match(
    page,
    /\| f \| debate-mada \(the MADA-RL paper\) \| [^|]+ \| e's \| 16 \| pending \|/,
  );
  assert.match(page, /- `debate-mada`: the MADA-RL paper/);
  assert.match(page, /\| rewards \|/);
  assert.match(page, /11 runs and 1 start run,/);

  // A cell whose seeds drew other problems: no shared benchmark, every set named.
  const { results: mixed } = await syntheticStudy({}, {
    cells: { g: { start: "g" }, d: { start: "g" } },
    starts: { g: { avg: 0.2, pass: 0.5, norms: {}, sha: sha("c") } },
  });
  const g2 = mixed.cells.find((c) => c.id === "g")!;
  assert.equal(g2.start!.sameBenchmark, false, "the start run evaluated other problems");
  assert.match(renderStudy(mixed, studyCharts(mixed), dir), /† The start run was evaluated/);
  assert.equal(mixed.cells.find((c) => c.id === "e")!.start, null, "e declares no start");
});

Deno.test("a study.json from before start runs, hashes and presets reads with them empty", async () => {
  const { dir, results } = await syntheticStudy();
  const file = join(dir, "old.json");
  await Deno.writeTextFile(file, JSON.stringify(asV2(results)));
  const read = await readStudyResults(file);
  for (const c of read.cells) {
    assert.deepEqual([c.start, c.benchmarks, c.follows, c.config], [null, [], null, null]);
  }
  assert.ok(read.comparisons.flatMap((c) => c.claims).every((c) => c.sameBenchmark === null));
  // Its page has no start table.
  assert.doesNotMatch(renderStudy(read, studyCharts(read), dir), /\| start run \|/);
});

Deno.test("a claim's agents: once per run, the claim's own agent, or every agent of its cells", () => {
  const cells = [
    { agents: [{ agent: "verifier" }, { agent: "solver" }] },
    { agents: [{ agent: "solver" }, { agent: "critic" }] },
  ] as unknown as Parameters<typeof claimAgents>[1];
  assert.deepEqual(claimAgents({ metric: "avg@k" }, cells), [null]);
  assert.deepEqual(claimAgents({ metric: "lemma-multiplier" }, cells), [
    "critic",
    "solver",
    "verifier",
  ]);
  assert.deepEqual(claimAgents({ metric: "lemma-multiplier", agent: "verifier" }, cells), [
    "verifier",
  ]);
});

Deno.test("wall time: the span, and within it the time a run was under way (gaps between sessions out)", () => {
  const run = (startedMs: number, endedMs: number) => ({ startedMs, endedMs });
  assert.equal(unionSeconds([]), 0);
  // Two side by side count once; one inside another adds nothing; a gap adds nothing.
  assert.equal(unionSeconds([run(0, 10_000), run(5_000, 20_000)]), 20);
  assert.equal(unionSeconds([run(0, 30_000), run(5_000, 10_000)]), 30);
  assert.equal(unionSeconds([run(60_000, 70_000), run(0, 10_000), run(5_000, 20_000)]), 30);
});
