/**
 * The study's numbers, verdicts, page and figures from synthetic runs with known values (the end
 * to end test covers the store path; here every branch gets data that is not all zero).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { CriticRoundEffect } from "../../analysis/stats/mod.ts";
import type { StreamHead } from "../../events/mod.ts";
import { loadGrid } from "../../study/load-grid.ts";
import { type PlannedRun, planRuns } from "../../study/plan-runs.ts";
import type { ReplayRecord } from "../../study/replay-records.ts";
import { renderStudy } from "../../study/render-study.ts";
import { studyCharts } from "../../study/study-charts.ts";
import type { StudyRun } from "../../study/study-data.ts";
import { withPreviousStudy } from "../../study/read-study-results.ts";
import { claimAgents, type StudyResults, studyResults } from "../../study/study-results.ts";

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
}

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

/** A grid of four synthetic cells (refine g/d, debate e/f) and its results over 3 seeds. */
async function syntheticStudy(gridExtra: Record<string, unknown> = {}) {
  const dir = await Deno.makeTempDir();
  const write = (name: string, body: unknown) =>
    Deno.writeTextFile(join(dir, name), JSON.stringify(body));
  await write("g.json", {
    extends: "smoke",
    estimator: { kind: "grpo" },
    updates: { mini_batches: 2 },
    loss: { clip_eps_high: 0.28 },
  });
  await write("d.json", { extends: "smoke" });
  await write("e.json", { extends: "debate-mada" });
  await write("f.json", { extends: "debate-mada", estimator: { kind: "grpo" } });
  await write("grid.json", {
    title: "Synthetic",
    cells: ["g", "d", "e", "f"].map((id) => ({ id, title: id, config: `${id}.json` })),
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
  const results = studyResults({
    grid,
    plan,
    runs,
    replays: [record(byCell("g")[0], "h-g"), record(byCell("d")[0], "old")],
    heads: new Map([head(byCell("g")[0], "h-g"), head(byCell("d")[0], "h-d")]),
    hardware: { cpuModel: "Test CPU", cores: 2, os: "linux", arch: "x86_64" },
    store: "s.sqlite",
    seeds: 3,
  });
  return { dir, grid, results, byCell };
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

Deno.test("changes from a previous study: every earlier claim matched, setup and notes named", async () => {
  const note = "the estimator fix removed the eps division";
  const { dir, grid, results } = await syntheticStudy({
    previous: { results: "v1/study.json", title: "v1", changes: ["a new base model"] },
  });
  // The earlier study: 5 seeds, g on 16 samples, d's avg@k disagreeing, one claim since dropped,
  // no lemma claims yet.
  const claims = results.comparisons.flatMap((c) => c.claims);
  const earlier: StudyResults = {
    ...results,
    seeds: 5,
    cells: results.cells.map((c) =>
      // Like v1's study.json: g evaluated on 16 samples, no update scheme recorded (not a change).
      c.id === "g"
        ? {
          ...c,
          k: 16,
          setup: { ...c.setup, evaluation: "validation × 16", updates: undefined },
        }
        : c
    ),
    comparisons: results.comparisons.map((c) => ({
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
          // v1's verifier spikes: a verdict then, none to test now (no spread) is a change too.
          if (x.verdict === "not testable") {
            return { ...x, verdict: "agrees" as const, test: { ...x.test!, diff: -4, p: 0.01 } };
          }
          return x;
        }),
        ...(c.id === "x" ? [{ ...c.claims[0], cell: "g", against: "d", paper: "dropped" }] : []),
      ],
    })),
  };
  await Deno.mkdir(join(dir, "v1"));
  await Deno.writeTextFile(join(dir, "v1", "study.json"), JSON.stringify(earlier));
  // The grid's note for d's avg@k claim.
  const withNote = {
    ...grid,
    comparisons: grid.comparisons.map((c) => ({
      ...c,
      claims: c.claims.map((x) => x.metric === "avg@k" ? { ...x, since_previous: note } : x),
    })),
  };
  const compared = await withPreviousStudy(results, withNote);
  const p = compared.previous!;
  assert.equal(p.title, "v1");
  assert.deepEqual(p.changes, ["a new base model"]);
  const avg = p.claims.find((c) => c.metric === "avg@k" && c.cell === "d")!;
  assert.equal(avg.changed, true);
  assert.equal(avg.before!.verdict, "disagrees");
  assert.equal(avg.after!.verdict, "agrees");
  assert.equal(avg.before!.k, 2, "the k of the tested cell d, not of g");
  assert.deepEqual(avg.setup, [
    "g evaluation: validation × 16 → " + results.cells[0].setup.evaluation,
    "seeds: 5 → 3",
  ]);
  assert.equal(avg.note, note);
  const pass = p.claims.find((c) => c.metric === "pass@k")!;
  assert.equal(pass.changed, false);
  const spikes = p.claims.find((c) => c.after?.verdict === "not testable")!;
  assert.equal(spikes.before!.verdict, "agrees");
  assert.equal(spikes.changed, true);
  const dropped = p.claims.find((c) => c.paper === "dropped")!;
  assert.equal(dropped.after, null);
  assert.equal(dropped.changed, false);
  const added = p.claims.filter((c) => c.before === null);
  assert.deepEqual(added.map((c) => `${c.metric}:${c.agent}`), [
    "lemma-multiplier:solver",
    "lemma-multiplier:verifier",
  ]);
  // Earlier claims first, then the new ones; every claim of both studies appears once.
  assert.equal(p.claims.length, claims.length - 2 + 1 + 2);

  const page = renderStudy(compared, studyCharts(compared), join(dir, "out"));
  assert.match(page, /## Changes from v1\n/);
  assert.match(page, /\(\.\.\/v1\/study\.json\)/);
  assert.match(page, /2 of 8 verdicts changed; 2 claims are new in this study/);
  assert.match(page, /- a new base model/);
  assert.match(
    page,
    new RegExp(
      `\\| avg@2 of d higher than g \\| \\*\\*disagrees\\*\\* \\(-5\\.00, p = 0\\.010; k = 2\\) \\| ` +
        `\\*\\*agrees\\*\\* \\(\\+10\\.00, p = [^;]+; k = 2\\) \\| \\*\\*yes\\*\\* \\| ${note} setup: g evaluation: [^|]* \\|`,
    ),
  );
  assert.match(page, /\| not in this grid \|/);
  // A grid without a previous study renders no such section.
  assert.doesNotMatch(renderStudy(results, studyCharts(results), dir), /Changes from/);
  // The earlier file unreadable: the error names it and the fix.
  await Deno.remove(join(dir, "v1", "study.json"));
  await assert.rejects(() => withPreviousStudy(results, withNote), /v1\/study\.json/);
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
