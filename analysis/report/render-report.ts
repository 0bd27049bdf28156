import { toCsv } from "../../events/cli/mod.ts";
import { markdownTable } from "../format/markdown-table.ts";
import type { Report } from "./build-report.ts";
import type { Comparison } from "./comparison.ts";
import type { ProblemComparison } from "./problem-comparison.ts";
import type { PairedResult } from "../stats/mod.ts";
import { count, figure, points, pValue, signedPoints } from "./report-numbers.ts";

/** Output formats of `deno task report`: text on stdout (md, json) or a folder of CSVs. */
export type ReportFormat = ReportTextFormat | "csv";

/** The formats `renderReport` writes as one text. */
export type ReportTextFormat = "md" | "json";

function cellOf(report: Report, group: string, benchmark: string) {
  return report.accuracy.find((c) => c.group === group && c.benchmark === benchmark);
}

function ciText(test: { readonly ci: readonly [number, number] } | null): string {
  return test ? `[${signedPoints(test.ci[0])}, ${signedPoints(test.ci[1])}]` : "n/a";
}

function testName(c: ProblemComparison): string {
  return c.mcnemar ? "McNemar exact" : c.paired ? "paired t" : "n/a";
}

/** The per-problem view against the baseline: a summary table, then the problems that differ. */
function byProblemMarkdown(r: Report): string[] {
  const key = r.groupBy;
  const paired = r.vsBaselineByProblem.filter((c) => c.unpaired === null);
  const unpaired = r.vsBaselineByProblem.filter((c) => c.unpaired !== null);
  const intro = `Where a group and the baseline were graded on the same problems (the same ` +
    `benchmark SHA-256), each problem's accuracy (correct samples over samples, mean over the ` +
    `group's runs) is paired across the two. The test is McNemar's exact test on the discordant ` +
    `problems where each group has one run with one sample per problem (one right/wrong outcome ` +
    `per problem and group), else the paired t-test over problems; the CI is the paired t-test's ` +
    `over problems, r the correlation of the two groups' per-problem accuracies and SE Welch / ` +
    `paired how many times smaller pairing on problems makes the standard error. Ahead: problems ` +
    `the group does better on than the baseline (right where the baseline is wrong, for ` +
    `McNemar); behind: the reverse.`;
  if (r.vsBaselineByProblem.length === 0) {
    return [intro, "", `_Empty: ${r.vsBaselineByProblemEmpty ?? "no rows"}._`, ""];
  }
  return [
    intro,
    "",
    ...(paired.length === 0 ? [] : [
      markdownTable(
        [
          key,
          "benchmark",
          "problems",
          "diff",
          "95% CI",
          "ahead",
          "behind",
          "level",
          "test",
          "p",
          "r",
          "SE Welch / paired",
        ],
        paired.map((c) => [
          c.group,
          c.benchmark,
          String(c.problems.length),
          signedPoints(c.diff!),
          ciText(c.paired),
          String(c.ahead),
          String(c.behind),
          String(c.level),
          testName(c),
          pValue(c.p ?? undefined),
          figure(c.paired?.correlation ?? null),
          figure(c.paired?.seRatio ?? null),
        ]),
      ),
      "",
    ]),
    ...(unpaired.length === 0 ? [] : [
      "Not paired problem by problem:",
      "",
      ...unpaired.map((c) => `- \`${key}=${c.group}\` on ${c.benchmark}: ${c.unpaired}.`),
      "",
    ]),
    ...paired.filter((c) => c.ahead + c.behind > 0).flatMap((c) => [
      `### ${c.group} against ${c.against} on ${c.benchmark}: the problems they differ on`,
      "",
      markdownTable(
        ["problem", c.group, c.against],
        c.problems.filter((p) => p.accuracy !== p.againstAccuracy)
          .map((p) => [p.problem, points(p.accuracy), points(p.againstAccuracy)]),
      ),
      "",
    ]),
  ];
}

function markdown(r: Report): string {
  const groups = r.groups.map((g) => g.value);
  const key = r.groupBy;
  const runsOf = new Map(r.groups.map((g) => [g.value, g.runs.length]));
  const table = (rows: readonly unknown[], empty: string | null, render: () => string) =>
    rows.length ? render() : `_Empty: ${empty ?? "no rows"}._`;
  // One pairwise matrix, row group against column group; "—" where a pair was not compared.
  const pairwise = (cell: (c: Comparison) => string) =>
    table(r.pairwise, r.pairwiseEmpty, () =>
      markdownTable(
        [key, ...groups],
        groups.map((a) => [
          a,
          ...groups.map((b) => {
            const c = r.pairwise.find((p) => p.group === a && p.against === b);
            return c ? cell(c) : "—";
          }),
        ]),
      ));
  const out: string[] = [
    `# Report: runs grouped by \`${key}\``,
    "",
    `Baseline: \`${key}=${r.baseline}\`. Accuracy is ${r.metric} at each run's last evaluation, in ` +
    `percentage points, mean ± SEM over runs (seeds); a column is one benchmark at one k ` +
    `(samples per problem), so results with different k are never averaged together. Tests are ` +
    `Welch's two-sided t-tests over per-run accuracy; where two groups ran the same seeds, the ` +
    `paired t-test over seeds stands beside it (runs of one seed share their random draws and ` +
    `synthetic benchmark), with the correlation r of the pairs and how many times smaller its ` +
    `standard error is than Welch's; CIs are 95%.`,
    "",
    markdownTable(
      [key, "runs"],
      r.groups.map((g) => [g.value, g.runs.join(", ")]),
    ),
    "",
    ...(r.unevaluated.length
      ? [`Runs without an evaluation (no accuracy): ${r.unevaluated.join(", ")}.`, ""]
      : []),
    "## Accuracy",
    "",
    ...(r.averageOf.length && r.averageOf.length < r.benchmarks.length - 1
      ? [`The average is over the columns every run has: ${r.averageOf.join(", ")}.`, ""]
      : r.averageOf.length === 0 && r.benchmarks.length > 0
      ? ["No column is shared by every run, so there is no average column.", ""]
      : []),
    table(r.accuracy, "no selected run has an evaluation yet", () =>
      markdownTable(
        [key, "n", ...r.benchmarks],
        groups.map((g) => [
          g,
          String(runsOf.get(g) ?? 0),
          ...r.benchmarks.map((b) => {
            const c = cellOf(r, g, b);
            if (!c) return "n/a";
            const n = c.n === runsOf.get(g) ? "" : ` (n=${c.n})`;
            return `${points(c.mean)}${c.sem === null ? "" : ` ± ${points(c.sem)}`}${n}`;
          }),
        ]),
      )),
    "",
    "## What else differs between the groups",
    "",
    r.configDifferences.length
      ? `Config keys other than \`${key}\` whose values differ between groups: a comparison ` +
        `between groups that differ in one is confounded (marked below), since its difference ` +
        `is not \`${key}\`'s alone.\n\n` +
        markdownTable(
          ["key", ...groups],
          r.configDifferences.map((d) => [d.key, ...groups.map((g) => d.values[g].join(", "))]),
        )
      : `Nothing: the groups' configs differ only in \`${key}\` (and seeds, names, stores).`,
    "",
    `## Against the baseline (${r.baseline})`,
    "",
    table(r.vsBaseline, r.vsBaselineEmpty, () =>
      markdownTable(
        [
          key,
          "benchmark",
          "diff",
          "95% CI",
          "t",
          "df",
          "p",
          "paired 95% CI",
          "paired p",
          "pairs",
          "r",
          "SE Welch / paired",
          "confounded by",
        ],
        r.vsBaseline.map((c) => [
          c.group,
          c.benchmark,
          signedPoints(c.diff),
          ciText(c.welch),
          figure(c.welch?.t ?? null),
          figure(c.welch?.df ?? null),
          pValue(c.welch?.p),
          ciText(c.paired),
          pValue(c.paired?.p),
          c.paired ? String(c.paired.n) : "not paired",
          figure(c.paired?.correlation ?? null),
          figure(c.paired?.seRatio ?? null),
          c.confounds.length ? c.confounds.join(", ") : "—",
        ]),
      )),
    "",
    `## Against the baseline (${r.baseline}), problem by problem`,
    "",
    ...byProblemMarkdown(r),
    "## Pairwise differences on average accuracy (row − column, points ± SE)",
    "",
    pairwise((c) =>
      c.welch ? `${signedPoints(c.diff)} ± ${points(c.welch.se)}` : signedPoints(c.diff)
    ),
    "",
    "## Pairwise p-values on average accuracy (Welch, no multiple-comparison correction)",
    "",
    pairwise((c) => pValue(c.welch?.p)),
    "",
    `## Training stability: gradient norm per worker group`,
    "",
    `Median, p99, max and max/median are means over runs; a spike is an update above ` +
    `${r.spikeMultiple}× the running median of the earlier finite nonzero norms; counts are ` +
    `totals over runs.`,
    "",
    markdownTable(
      [key, "wg", "runs", "median", "p99", "max", "max/median", "spikes", "non-finite"],
      r.stability.map((s) => [
        s.group,
        s.wg,
        String(s.runs),
        figure(s.median),
        figure(s.p99),
        figure(s.max),
        figure(s.maxOverMedian),
        String(s.spikes),
        String(s.nonFinite),
      ]),
    ),
    "",
    "## Lemma 4.2 multiplier per agent (mean over steps, then runs; 1 = no mismatch)",
    "",
    markdownTable(
      [key, "agent", "runs", "multiplier"],
      r.lemma.map((l) => [l.group, l.agent, String(l.runs), figure(l.multiplier)]),
    ),
    "",
    ...(r.critic.length === 0 ? [] : [
      "## Critic improvement on evaluation debates",
      "",
      "Share of questions whose generators' majority answer was wrong and whose critics' majority " +
      "answer in the round is right (improvement), and the reverse (degradation); " +
      "mean ± SEM over runs, in percent. The log grades final answers only, so an answer that " +
      "differs from its trajectory's graded final answer counts as not right.",
      "",
      markdownTable(
        [key, "round", "runs", "improvement", "degradation", "round accuracy"],
        r.critic.map((c) => [
          c.group,
          String(c.round),
          String(c.runs),
          `${points(c.improvementRate)}${
            c.improvementSem === null ? "" : ` ± ${points(c.improvementSem)}`
          }`,
          points(c.degradationRate),
          points(c.accuracy),
        ]),
      ),
      "",
    ]),
    "## Cost",
    "",
    markdownTable(
      [key, "tokens/question", "turns/trajectory", "trainable params", "gain/param (vs baseline)"],
      r.cost.map((c) => [
        c.group,
        figure(c.tokensPerQuestion),
        figure(c.turnsPerTrajectory),
        count(c.trainableParameters),
        figure(c.gainPerParameter),
      ]),
    ),
    "",
  ];
  return out.join("\n");
}

/** One table of a report as CSV: its file name (without `.csv`) and its CSV text. */
export interface ReportCsv {
  readonly name: string;
  readonly csv: string;
}

/**
 * The report's tables as one CSV each (raw fractions, empty fields for missing values), for
 * `deno task report --format csv --out DIR`: runs, accuracy, config_differences, vs_baseline,
 * vs_baseline_by_problem (one row per comparison), problem_pairs (every paired problem's two
 * accuracies), pairwise, stability, lemma, critic and cost. An empty table is its header line
 * alone.
 *
 * @example
 * ```ts
 * import type { Report } from "./build-report.ts";
 * import { reportCsvTables } from "./render-report.ts";
 * declare const report: Report;
 *
 * for (const t of reportCsvTables(report)) await Deno.writeTextFile(`out/${t.name}.csv`, t.csv);
 * ```
 */

/** The CSV columns of a paired t-test, beside Welch's or McNemar's: see `pairedCells`. */
const PAIRED_COLUMNS = [
  "paired_se",
  "paired_t",
  "paired_p",
  "paired_ci_low",
  "paired_ci_high",
  "pair_correlation",
  "se_ratio",
] as const;

/** A paired t-test's cells under PAIRED_COLUMNS; nulls where the design is not paired. */
function pairedCells(p: PairedResult | null) {
  return [p?.se, p?.t, p?.p, p?.ci[0], p?.ci[1], p?.correlation, p?.seRatio].map((v) => v ?? null);
}
export function reportCsvTables(r: Report): ReportCsv[] {
  const finite = (x: number | null) => x !== null && Number.isFinite(x) ? x : null;
  const table = (name: string, columns: string[], rows: unknown[][]) => ({
    name,
    csv: toCsv(columns, rows.map((row) => row.map((v) => typeof v === "number" ? finite(v) : v))),
  });
  const comparisons = (cs: readonly Comparison[]) =>
    cs.map((c) => [
      c.group,
      c.against,
      c.benchmark,
      c.diff,
      c.welch?.se ?? null,
      c.welch?.t ?? null,
      c.welch?.df ?? null,
      c.welch?.p ?? null,
      c.welch?.ci[0] ?? null,
      c.welch?.ci[1] ?? null,
      c.paired?.n ?? null,
      ...pairedCells(c.paired),
      c.confounds.join(" "),
    ]);
  const compCols = [
    "group",
    "against",
    "benchmark",
    "diff",
    "se",
    "t",
    "df",
    "p",
    "ci_low",
    "ci_high",
    "paired_n",
    ...PAIRED_COLUMNS,
    "confounds",
  ];
  return [
    table("runs", ["group", "run_id"], r.groups.flatMap((g) => g.runs.map((id) => [g.value, id]))),
    table(
      "accuracy",
      ["group", "benchmark", "n", "mean", "sem"],
      r.accuracy.map((c) => [c.group, c.benchmark, c.n, c.mean, c.sem]),
    ),
    table(
      "config_differences",
      ["key", "group", "values"],
      r.configDifferences.flatMap((d) =>
        Object.entries(d.values).map(([group, values]) => [d.key, group, values.join(" ")])
      ),
    ),
    table("vs_baseline", compCols, comparisons(r.vsBaseline)),
    table(
      "vs_baseline_by_problem",
      [
        "group",
        "against",
        "benchmark",
        "benchmark_sha256",
        "unpaired",
        "problems",
        "ahead",
        "behind",
        "level",
        "diff",
        "test",
        "p",
        ...PAIRED_COLUMNS,
      ],
      r.vsBaselineByProblem.map((c) => [
        c.group,
        c.against,
        c.benchmark,
        c.sha256,
        c.unpaired,
        c.problems.length,
        c.ahead,
        c.behind,
        c.level,
        c.diff,
        c.mcnemar ? "mcnemar" : c.paired ? "paired_t" : null,
        c.p,
        ...pairedCells(c.paired),
      ]),
    ),
    table(
      "problem_pairs",
      ["group", "against", "benchmark", "problem_id", "accuracy", "against_accuracy"],
      r.vsBaselineByProblem.flatMap((c) =>
        c.problems.map((p) => [
          c.group,
          c.against,
          c.benchmark,
          p.problem,
          p.accuracy,
          p.againstAccuracy,
        ])
      ),
    ),
    table("pairwise", compCols, comparisons(r.pairwise)),
    table(
      "stability",
      ["group", "wg", "runs", "median", "p99", "max", "max_over_median", "spikes", "non_finite"],
      r.stability.map((
        s,
      ) => [s.group, s.wg, s.runs, s.median, s.p99, s.max, s.maxOverMedian, s.spikes, s.nonFinite]),
    ),
    table(
      "lemma",
      ["group", "agent", "runs", "multiplier"],
      r.lemma.map((l) => [l.group, l.agent, l.runs, l.multiplier]),
    ),
    table(
      "critic",
      [
        "group",
        "round",
        "runs",
        "improvement_rate",
        "improvement_sem",
        "degradation_rate",
        "accuracy",
      ],
      r.critic.map((
        c,
      ) => [
        c.group,
        c.round,
        c.runs,
        c.improvementRate,
        c.improvementSem,
        c.degradationRate,
        c.accuracy,
      ]),
    ),
    table(
      "cost",
      [
        "group",
        "tokens_per_question",
        "turns_per_trajectory",
        "trainable_parameters",
        "gain_per_parameter",
      ],
      r.cost.map((
        c,
      ) => [
        c.group,
        c.tokensPerQuestion,
        c.turnsPerTrajectory,
        c.trainableParameters,
        c.gainPerParameter,
      ]),
    ),
  ];
}

/**
 * Renders a report as text: Markdown (a readable page) or JSON (the report object; NaN and
 * infinities become null). CSV is one file per table: `reportCsvTables`.
 *
 * @example
 * ```ts
 * import { buildReport } from "./build-report.ts";
 * import { renderReport } from "./render-report.ts";
 * import type { RunSummary } from "./run-summary.ts";
 * declare const runs: readonly RunSummary[];
 *
 * console.log(renderReport(buildReport(runs, { groupBy: "estimator" }), "md"));
 * ```
 */
export function renderReport(report: Report, format: ReportTextFormat): string {
  if (format === "md") return markdown(report);
  return JSON.stringify(report, null, 2) + "\n";
}
