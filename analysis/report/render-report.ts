import { toCsv } from "../format/csv.ts";
import { markdownTable } from "../format/markdown-table.ts";
import type { Report } from "./build-report.ts";
import type { Comparison } from "./comparison.ts";
import { figure, points, pValue, signedPoints } from "./report-numbers.ts";

/** Output formats of `deno task report`. */
export type ReportFormat = "md" | "csv" | "json";

function cellOf(report: Report, group: string, benchmark: string) {
  return report.accuracy.find((c) => c.group === group && c.benchmark === benchmark);
}

function ciText(c: Comparison): string {
  return c.welch ? `[${signedPoints(c.welch.ci[0])}, ${signedPoints(c.welch.ci[1])}]` : "n/a";
}

function markdown(r: Report): string {
  const groups = r.groups.map((g) => g.value);
  const key = r.groupBy;
  const out: string[] = [
    `# Report: runs grouped by \`${key}\``,
    "",
    `Baseline: \`${key}=${r.baseline}\`. Accuracy is ${r.metric} at each run's last evaluation, in ` +
    `percentage points, mean ± SEM over runs (seeds). Tests are Welch's two-sided t-tests over ` +
    `per-run accuracy; CIs are 95%.`,
    "",
    markdownTable(
      [key, "runs"],
      r.groups.map((g) => [g.value, g.runs.join(", ")]),
    ),
    "",
    "## Accuracy",
    "",
    markdownTable(
      [key, "n", ...r.benchmarks],
      groups.map((g) => [
        g,
        String(cellOf(r, g, r.benchmarks[0])?.n ?? 0),
        ...r.benchmarks.map((b) => {
          const c = cellOf(r, g, b);
          return c ? `${points(c.mean)}${c.sem === null ? "" : ` ± ${points(c.sem)}`}` : "n/a";
        }),
      ]),
    ),
    "",
    `## Against the baseline (${r.baseline})`,
    "",
    markdownTable(
      [key, "benchmark", "diff", "95% CI", "t", "df", "p"],
      r.vsBaseline.map((c) => [
        c.group,
        c.benchmark,
        signedPoints(c.diff),
        ciText(c),
        figure(c.welch?.t ?? null),
        figure(c.welch?.df ?? null),
        pValue(c.welch?.p),
      ]),
    ),
    "",
    "## Pairwise differences on average accuracy (row − column, points ± SE)",
    "",
    markdownTable(
      [key, ...groups],
      groups.map((a) => [
        a,
        ...groups.map((b) => {
          const c = r.pairwise.find((p) => p.group === a && p.against === b);
          if (!c) return "—";
          return c.welch ? `${signedPoints(c.diff)} ± ${points(c.welch.se)}` : signedPoints(c.diff);
        }),
      ]),
    ),
    "",
    "## Pairwise p-values on average accuracy (Welch, no multiple-comparison correction)",
    "",
    markdownTable(
      [key, ...groups],
      groups.map((a) => [
        a,
        ...groups.map((b) => {
          const c = r.pairwise.find((p) => p.group === a && p.against === b);
          return c ? pValue(c.welch?.p) : "—";
        }),
      ]),
    ),
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
        figure(c.trainableParameters),
        figure(c.gainPerParameter),
      ]),
    ),
    "",
  ];
  return out.join("\n");
}

function csv(r: Report): string {
  const section = (name: string, columns: string[], rows: unknown[][]) =>
    `# ${name}\n${toCsv(columns, rows)}`;
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
  ];
  return [
    section(
      "accuracy",
      ["group", "benchmark", "n", "mean", "sem"],
      r.accuracy.map((c) => [c.group, c.benchmark, c.n, c.mean, c.sem]),
    ),
    section("vs_baseline", compCols, comparisons(r.vsBaseline)),
    section("pairwise", compCols, comparisons(r.pairwise)),
    section(
      "stability",
      ["group", "wg", "runs", "median", "p99", "max", "max_over_median", "spikes", "non_finite"],
      r.stability.map((
        s,
      ) => [s.group, s.wg, s.runs, s.median, s.p99, s.max, s.maxOverMedian, s.spikes, s.nonFinite]),
    ),
    section(
      "lemma",
      ["group", "agent", "runs", "multiplier"],
      r.lemma.map((l) => [l.group, l.agent, l.runs, l.multiplier]),
    ),
    section(
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
    section(
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
  ].join("\n");
}

/**
 * Renders a report: Markdown (a readable page), CSV (one `# name` block per table, raw
 * fractions) or JSON (the report object; NaN and infinities become null).
 *
 * @example
 * ```ts
 * console.log(renderReport(buildReport(runs, { groupBy: "estimator" }), "md"));
 * ```
 */
export function renderReport(report: Report, format: ReportFormat): string {
  if (format === "md") return markdown(report);
  if (format === "csv") return csv(report);
  return JSON.stringify(report, null, 2) + "\n";
}
