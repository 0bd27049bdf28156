/**
 * The per-problem paired view (issue 33 item 8) through `deno task report`, `deno task sql` and
 * the Compare page, on a real SQLite store: two estimators, two seeds each, graded on one `math`
 * benchmark (the same SHA-256) with one sample per problem, whose outcomes are set problem by
 * problem, and on a `gsm8k` benchmark whose problems differ between the estimators. Expected
 * values: McNemar's p by hand (2 · (1 + 8) / 2^8), the paired t-test over problems from
 * scipy.stats.ttest_rel, pearsonr and ttest_ind (SE ratio) on the per-problem accuracies below.
 */
import assert from "node:assert/strict";
import { hashConfig, type NewEvent, openStore } from "../../events/mod.ts";
import { buildReport, type ProblemComparison, type RunSummary } from "../../analysis/report/mod.ts";
import { PROBLEM_OUTCOMES_SQL } from "../../analysis/queries/problem-outcomes.ts";
import { runCli } from "../support/run-cli.ts";
import { fakeRunEvents } from "../support/fake-run.ts";
import { dashboardAppOver } from "../web/fixtures/dashboard-store.ts";
import { runSpec } from "./fixtures/fill-store.ts";

const MATH_SHA = "a1".repeat(32);
const GSM_SHA = { drmas: "d2".repeat(32), grpo: "e3".repeat(32) };

/** Which of math/0 .. math/11 each run gets right (one sample per problem). */
const MATH_RIGHT: Record<string, readonly number[]> = {
  "drmas-1": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  "grpo-1": [0, 1, 2, 10],
  "drmas-2": [0, 1, 2, 3, 4, 5, 10, 11],
  "grpo-2": [0, 3, 4],
};

/** A run graded on math (12 problems) and gsm8k (4), at k = 1, with the outcomes above. */
function runEvents(estimator: "drmas" | "grpo", seed: number): NewEvent[] {
  const runId = `${estimator}-${seed}`;
  const spec = runSpec({ runId, estimator, seed, steps: 1, k: 1, benchmarks: ["gsm8k", "math"] });
  const outcomes = (benchmark: string, count: number, right: readonly number[]) =>
    Array.from({ length: count }, (_, i) => ({
      problemId: `${benchmark}/${i}`,
      n: 1,
      c: right.includes(i) ? 1 : 0,
    }));
  return [...fakeRunEvents(spec)].flat().map((e): NewEvent => {
    if (e.type === "run.started") {
      const config = { ...e.data.config as Record<string, unknown>, name: "by-problem" };
      return {
        ...e,
        data: {
          ...e.data,
          config,
          configHash: hashConfig(config),
          benchmarks: {
            math: { problems: 12, sha256: MATH_SHA },
            gsm8k: { problems: 4, sha256: GSM_SHA[estimator] },
          },
        },
      };
    }
    if (e.type !== "evaluation.completed") return e;
    const problems = e.data.benchmark === "math"
      ? outcomes("math", 12, MATH_RIGHT[runId])
      : outcomes("gsm8k", 4, [0, seed]);
    const accuracy = problems.reduce((s, p) => s + p.c, 0) / problems.length;
    return { ...e, data: { ...e.data, problems, metrics: { "avg@1": accuracy } } };
  });
}

async function store(): Promise<{ dir: string; path: string }> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-by-problem-" });
  const path = `${dir}/events.sqlite`;
  await using s = await openStore(path);
  for (const seed of [1, 2]) {
    for (const estimator of ["drmas", "grpo"] as const) {
      await s.append(`${estimator}-${seed}`, runEvents(estimator, seed));
    }
  }
  return { dir, path };
}

const GSM_UNPAIRED = "the two groups were graded on different problems: " +
  `estimator=drmas on SHA-256 ${"d2".repeat(6)}…, estimator=grpo on SHA-256 ${"e3".repeat(6)}…`;

/** The comparison's numbers rounded to 12 significant digits, for exact expectations. */
function numbers(c: ProblemComparison) {
  const r = (x: number | null | undefined) => x == null ? x : Number(x.toPrecision(12));
  return {
    problems: c.problems.length,
    ahead: c.ahead,
    behind: c.behind,
    level: c.level,
    diff: r(c.diff),
    p: r(c.p),
    mcnemar: c.mcnemar && { aOnly: c.mcnemar.aOnly, bOnly: c.mcnemar.bOnly, p: c.mcnemar.p },
    t: r(c.paired?.t),
    ci: c.paired?.ci.map(r),
    correlation: r(c.paired?.correlation),
    seRatio: r(c.paired?.seRatio),
  };
}

Deno.test({
  name: "per-problem view: McNemar on one run a side, paired t over problems on several, " +
    "refused on different benchmarks (report md/json/csv, sql, Compare page)",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const { dir, path } = await store();
    try {
      await t.step("one run a side, one sample a problem: McNemar's exact test", async () => {
        const md = await runCli(
          "analysis/cli/report.ts",
          "drmas-1",
          "grpo-1",
          "--baseline",
          "grpo",
          "--store",
          path,
        );
        assert.equal(md.code, 0, md.stderr);
        const section = md.stdout.split("## Against the baseline (grpo), problem by problem\n")[1]
          .split("## Pairwise")[0];
        const lines = section.split("\n").filter((l) => l.startsWith("|") || l.startsWith("- "));
        assert.deepEqual(lines, [
          "| estimator | benchmark | problems | diff | 95% CI | ahead | behind | level | test | p " +
          "| r | SE Welch / paired |",
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
          "| drmas | math avg@1 | 12 | +50.00 | [+7.16, +92.84] | 7 | 1 | 4 | McNemar exact | " +
          "0.070 | -0.1581 | 0.9309 |",
          `- \`estimator=drmas\` on gsm8k avg@1: ${GSM_UNPAIRED}.`,
          "| problem | drmas | grpo |",
          "| --- | ---: | ---: |",
          ...[3, 4, 5, 6, 7, 8, 9].map((i) => `| math/${i} | 100.00 | 0.00 |`),
          "| math/10 | 0.00 | 100.00 |",
        ]);
        assert.match(section, /### drmas against grpo on math avg@1: the problems they differ on/);

        const json = await runCli(
          "analysis/cli/report.ts",
          "drmas-1",
          "grpo-1",
          "--baseline",
          "grpo",
          "--format",
          "json",
          "--store",
          path,
        );
        assert.equal(json.code, 0, json.stderr);
        const report = JSON.parse(json.stdout);
        const [gsm, math] = report.vsBaselineByProblem as ProblemComparison[];
        assert.equal(report.vsBaselineByProblemEmpty, null);
        assert.equal(math.sha256, MATH_SHA);
        assert.deepEqual(numbers(math), {
          problems: 12,
          ahead: 7,
          behind: 1,
          level: 4,
          diff: 0.5,
          // binomtest(7, 8, 0.5): 2 * (C(8,0) + C(8,1)) / 2^8
          p: 0.0703125,
          mcnemar: { aOnly: 7, bOnly: 1, p: 0.0703125 },
          t: 2.56904651573,
          ci: [0.0716338441884, 0.928366155812],
          correlation: -0.158113883008,
          seRatio: 0.930949336251,
        });
        assert.deepEqual(math.problems.slice(9), [
          { problem: "math/9", accuracy: 1, againstAccuracy: 0 },
          { problem: "math/10", accuracy: 0, againstAccuracy: 1 },
          { problem: "math/11", accuracy: 0, againstAccuracy: 0 },
        ]);
        assert.deepEqual(
          { benchmark: gsm.benchmark, unpaired: gsm.unpaired, problems: gsm.problems, p: gsm.p },
          { benchmark: "gsm8k avg@1", unpaired: GSM_UNPAIRED, problems: [], p: null },
        );
      });

      await t.step("two seeds a side: the paired t-test over per-problem accuracy", async () => {
        const out = `${dir}/csv`;
        const csv = await runCli(
          "analysis/cli/report.ts",
          "--name",
          "by-problem",
          "--baseline",
          "grpo",
          "--format",
          "csv",
          "--out",
          out,
          "--store",
          path,
        );
        assert.equal(csv.code, 0, csv.stderr);
        const [header, gsm, math, ...rest] = (await Deno.readTextFile(
          `${out}/vs_baseline_by_problem.csv`,
        )).trim().split("\n");
        assert.equal(
          header,
          "group,against,benchmark,benchmark_sha256,unpaired,problems,ahead,behind,level,diff," +
            "test,p,paired_se,paired_t,paired_p,paired_ci_low,paired_ci_high," +
            "pair_correlation,se_ratio",
        );
        assert.deepEqual(rest, []);
        const cells = math.split(",");
        assert.deepEqual(cells.slice(0, 11), [
          "drmas",
          "grpo",
          "math avg@1",
          MATH_SHA,
          "",
          "12",
          "10",
          "0",
          "2",
          String(5.5 / 12),
          "paired_t",
        ]);
        // scipy.stats.ttest_rel, pearsonr, and ttest_ind's SE over the paired one.
        const [p, se, tStat, pairedP, low, high, r, seRatio] = cells.slice(11).map(Number);
        const close = (x: number, want: number) => Math.abs(x - want) <= 1e-9 * Math.abs(want);
        assert.ok(close(p, 7.038829455846336e-05), `p ${p}`);
        assert.equal(pairedP, p);
        assert.ok(close(se, 0.0743235487513204), `se ${se}`);
        assert.ok(close(tStat, 6.166731016395269), `t ${tStat}`);
        assert.ok(close(low, 0.2947483054863297), `ci low ${low}`);
        assert.ok(close(high, 0.6219183611803369), `ci high ${high}`);
        assert.ok(close(r, 0.6509445549041193), `r ${r}`);
        assert.ok(close(seRatio, 1.6475089420958278), `se ratio ${seRatio}`);
        assert.ok(gsm.includes(`"${GSM_UNPAIRED}"`), gsm);

        const pairs = (await Deno.readTextFile(`${out}/problem_pairs.csv`)).trim().split("\n");
        assert.deepEqual(pairs, [
          "group,against,benchmark,problem_id,accuracy,against_accuracy",
          ...[
            [1, 1],
            [1, 0.5],
            [1, 0.5],
            [1, 0.5],
            [1, 0.5],
            [1, 0],
            [0.5, 0],
            [0.5, 0],
            [
              0.5,
              0,
            ],
            [0.5, 0],
            [0.5, 0.5],
            [0.5, 0],
          ].map(([a, b], i) => `drmas,grpo,math avg@1,math/${i},${a},${b}`),
        ]);
      });

      await t.step(
        "the outcomes the report pairs are one SQL statement in deno task sql",
        async () => {
          const sql = await runCli(
            "analysis/cli/sql.ts",
            `SELECT run_id, benchmark_sha256 = '${MATH_SHA}' AS same, sum(c) AS right, count(*) ` +
              `AS problems FROM (${PROBLEM_OUTCOMES_SQL}) WHERE benchmark = 'math' GROUP BY ALL ` +
              "ORDER BY run_id",
            "--format",
            "csv",
            "--store",
            path,
          );
          assert.equal(sql.code, 0, sql.stderr);
          assert.equal(
            sql.stdout,
            "run_id,same,right,problems\ndrmas-1,true,10,12\ndrmas-2,true,8,12\n" +
              "grpo-1,true,4,12\ngrpo-2,true,3,12\n",
          );
        },
      );

      await t.step("the Compare page shows the same view", async () => {
        await using d = await dashboardAppOver(path);
        const res = await d.app.request("/compare?runs=drmas-1,grpo-1&baseline=grpo");
        const body = await res.text();
        assert.equal(res.status, 200, body.slice(0, 1500));
        const row = body.match(/<table class="by-problem">.*?<tbody>(.*?)<\/tbody>/s)?.[1];
        const cells = [...(row ?? "").matchAll(/<td[^>]*>([^<]*)<\/td>/g)].map((m) => m[1]);
        assert.deepEqual(cells, [
          "drmas",
          "math avg@1",
          "12",
          "50",
          "[7.16, 92.8]",
          "7",
          "1",
          "4",
          "McNemar exact",
          "0.0703",
          "-0.16",
          "0.93×",
        ]);
        assert.match(
          body,
          new RegExp(
            `<li>estimator=drmas on gsm8k avg@1: not paired problem by problem: ${GSM_UNPAIRED}` +
              `\\.</li>`,
          ),
        );
        assert.match(
          body,
          /<summary>drmas against grpo on math avg@1: the 8 problems they differ on<\/summary>/,
        );
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** A run summary with per-problem outcomes only (the pure report, no store). */
function summary(
  runId: string,
  estimator: string,
  math: { sha256: string | null; right: readonly number[] } | null,
): RunSummary {
  return {
    runId,
    config: { estimator, seed: 1 },
    accuracy: { "math avg@1": 0.5 },
    gradNorms: [],
    lemma: [],
    critic: [],
    tokensPerQuestion: null,
    turnsPerTrajectory: null,
    trainableParameters: null,
    problems: math === null ? undefined : {
      "math avg@1": {
        benchmark: "math",
        k: 1,
        sha256: math.sha256,
        problems: [0, 1, 2].map((i) => ({
          problem: `math/${i}`,
          n: 1,
          c: math.right.includes(i) ? 1 : 0,
        })),
      },
    },
  };
}

Deno.test("per-problem view: says why where a run has no benchmark hash or no outcomes", () => {
  const byProblem = (runs: RunSummary[]) => {
    const r = buildReport(runs, { groupBy: "estimator", baseline: "grpo" });
    return { comparisons: r.vsBaselineByProblem, empty: r.vsBaselineByProblemEmpty };
  };
  const legacy = byProblem([
    summary("d", "drmas", { sha256: MATH_SHA, right: [0] }),
    summary("g", "grpo", { sha256: null, right: [1] }),
  ]);
  assert.equal(legacy.empty, null);
  assert.equal(
    legacy.comparisons[0].unpaired,
    "run g was recorded before runs recorded the SHA-256 of their benchmarks, so its problems " +
      "cannot be matched to the other group's by content",
  );
  const mixed = byProblem([
    summary("d", "drmas", { sha256: MATH_SHA, right: [0] }),
    summary("g1", "grpo", { sha256: MATH_SHA, right: [0] }),
    summary("g2", "grpo", { sha256: GSM_SHA.grpo, right: [0] }),
  ]);
  assert.equal(
    mixed.comparisons[0].unpaired,
    "the runs of estimator=grpo were graded on different problems (SHA-256 " +
      `${"a1".repeat(6)}…, ${"e3".repeat(6)}…)`,
  );
  // All three problems level: nothing discordant, McNemar's p is 1.
  const level = byProblem([
    summary("d", "drmas", { sha256: MATH_SHA, right: [2] }),
    summary("g", "grpo", { sha256: MATH_SHA, right: [2] }),
  ]).comparisons[0];
  assert.deepEqual([level.ahead, level.behind, level.level, level.diff, level.p], [0, 0, 3, 0, 1]);
  assert.deepEqual(byProblem([summary("d", "drmas", null), summary("g", "grpo", null)]), {
    comparisons: [],
    empty: "no group shares a benchmark at one k with the baseline in per-problem outcomes",
  });
});
