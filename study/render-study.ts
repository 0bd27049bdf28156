/**
 * The study report as Markdown (docs/study/README.md): setup, the papers' claims against this
 * study's numbers with their verdicts, accuracy, one section per comparison (tests, per-agent
 * stability, critic rounds, cost, figures), replay spot-checks, wall time, software and hardware.
 * Every number comes from the results, which come from the event log.
 */
import { relative, resolve } from "node:path";
import {
  count,
  figure,
  gainPerParameter,
  markdownTable,
  points,
  pValue,
  signedPoints,
} from "../analysis/mod.ts";
import { SEED_CAP } from "./claim-power.ts";
import { type DifferenceTest, welchTest } from "./claims.ts";
import { formatDuration } from "./format-duration.ts";
import type { ClaimMetric } from "./grid-schema.ts";
import type { SampleStat } from "./sample-stat.ts";
import type { ChartFile } from "./study-charts.ts";
import type { ClaimChange, ClaimOutcome, PreviousStudy } from "./previous-study.ts";
import type {
  CellResult,
  ClaimIdentity,
  ClaimResult,
  ComparisonResult,
  ReplayResult,
  StudyResults,
} from "./study-results.ts";

/** Metrics that are rates, printed in percentage points. */
const RATES: readonly ClaimMetric[] = ["avg@k", "pass@k", "critic-improvement"];

function interval(ci: readonly [number, number] | null, f: (x: number) => string): string {
  return ci ? ` [${f(ci[0])}, ${f(ci[1])}]` : "";
}

/** `mean ± SEM [95% CI]` in points (rates) or as plain figures. */
function stat(s: SampleStat | null, rate: boolean): string {
  if (s === null || s.mean === null) return "n/a";
  const f = rate ? points : (x: number) => figure(x);
  return `${f(s.mean)}${s.sem === null ? "" : ` ± ${f(s.sem)}`}${interval(s.ci, f)}`;
}

function testText(test: DifferenceTest | null, rate: boolean): string {
  if (test === null) return "n/a (needs 2 runs with a value on each side)";
  const f = rate ? signedPoints : (x: number) => (x >= 0 ? "+" : "") + figure(x);
  return `${f(test.diff)}${interval(test.ci, f)}, p = ${pValue(test.p)}`;
}

function metricName(metric: ClaimMetric, k: number): string {
  switch (metric) {
    case "avg@k":
      return `avg@${k}`;
    case "pass@k":
      return `pass@${k}`;
    case "critic-improvement":
      return "critic improvement rate (last round)";
    case "grad-norm-max-over-median":
      return "gradient-norm max/median";
    case "grad-norm-spikes":
      return "gradient-norm spikes per run";
    case "lemma-multiplier":
      return "Lemma 4.2 multiplier";
  }
}

function claimText(c: ClaimIdentity, k: number): string {
  const what = `${c.agent === null ? "" : `${c.agent}: `}${metricName(c.metric, k)}`;
  switch (c.expect) {
    case "higher":
      return `${what} of ${c.cell} higher than ${c.against}`;
    case "lower":
      return `${what} of ${c.cell} lower than ${c.against}`;
    case "not-lower":
      return `${what} of ${c.cell} not lower than ${c.against}`;
    case "not-one":
      return `${what} under ${c.cell} differs from 1`;
    case "above-one":
      return `${what} under ${c.cell} above 1`;
  }
}

function verdictText(c: Pick<ClaimResult, "verdict">): string {
  return c.verdict === "agrees" || c.verdict === "disagrees" ? `**${c.verdict}**` : c.verdict;
}

function studyNumber(c: ClaimResult): string {
  const rate = RATES.includes(c.metric);
  if (c.verdict === "pending") return "runs pending";
  const values = c.reference === null
    ? `${stat(c.value, rate)} vs 1`
    : `${stat(c.value, rate)} vs ${stat(c.reference, rate)}`;
  return `${values}; difference ${testText(c.test, rate)}`;
}

function claimsTable(results: StudyResults, claims: readonly ClaimResult[]): string {
  const k = (cell: string) => results.cells.find((c) => c.id === cell)!.k;
  return markdownTable(
    ["claim", "paper", "this study", "verdict", `power (${results.seeds} seeds)`],
    claims.map((c) => [
      claimText(c, k(c.cell)),
      c.paper,
      studyNumber(c),
      verdictText(c),
      powerText(c),
    ]),
  );
}

/** One study's verdict of a claim, with its difference and p. */
function outcomeText(o: ClaimOutcome | null, c: ClaimChange): string {
  if (o === null) return "not in this grid";
  if (o.diff === null) return o.verdict;
  const p = o.p === null ? "" : `, p = ${pValue(o.p)}`;
  return `${verdictText(o)} (${difference(c.metric, o.diff, true)}${p}; k = ${o.k})`;
}

/** The earlier study's claims beside this one's: what moved, and why. */
function previousSection(p: PreviousStudy, folder: string): string[] {
  const earlier = p.claims.filter((c) => c.before !== null);
  const added = p.claims.filter((c) => c.before === null);
  const changed = earlier.filter((c) => c.changed);
  const link = relative(resolve(folder), resolve(p.file));
  return [
    `## Changes from ${p.title}`,
    "",
    `Every claim of ${p.title} ([${link}](${link})) beside its verdict in this study: ` +
    `${changed.length} of ${earlier.length} verdicts changed; ${added.length} claims are new ` +
    `in this study. Changed for every cell:`,
    "",
    ...p.changes.map((c) => `- ${c}`),
    "",
    markdownTable(
      [
        "claim",
        p.title,
        "this study",
        "changed",
        "why: the grid's note, then the setup differences",
      ],
      earlier.map((c) => [
        claimText(c, c.after?.k ?? c.before!.k),
        outcomeText(c.before, c),
        outcomeText(c.after, c),
        c.changed ? "**yes**" : "no",
        [c.note, c.setup.length > 0 ? `setup: ${c.setup.join("; ")}` : null]
          .filter((part) => part !== null).join(" ") || "–",
      ]),
    ),
    "",
  ];
}

/** A difference in the metric's units: points for rates, a plain figure otherwise. */
function difference(metric: ClaimMetric, x: number, signed: boolean): string {
  if (RATES.includes(metric)) return signed ? signedPoints(x) : points(x);
  return (signed && x >= 0 ? "+" : "") + figure(x);
}

/** The claims table's power cell: what the seeds detect, and the paper's effect against it. */
function powerText(c: ClaimResult): string {
  const p = c.power;
  if (p.mde === null) return `n/a (${p.note})`;
  const mde = `detects ±${difference(c.metric, p.mde, false)}`;
  if (p.paperEffect === null) return mde;
  const seeds = p.seedsNeeded === null ? `> ${SEED_CAP}` : String(p.seedsNeeded);
  return `${mde}; paper ${difference(c.metric, p.paperEffect, true)}: power ` +
    `${percent(p.powerAtPaper!)}, ${seeds} seeds needed`;
}

function percent(x: number): string {
  return `${(100 * x).toFixed(x > 0.99 || x < 0.01 ? 1 : 0)}%`;
}

function powerSection(r: StudyResults, claims: readonly ClaimResult[]): string[] {
  const k = (cell: string) => r.cells.find((c) => c.id === cell)!.k;
  const rows = claims.map((c) => {
    const p = c.power;
    const sd = p.spread.map((s) => `${s.cell} ${difference(c.metric, s.sd, false)}`).join(", ");
    return [
      claimText(c, k(c.cell)),
      sd || "n/a",
      p.mde === null ? "n/a" : difference(c.metric, p.mde, false),
      p.paperEffect === null ? "not stated" : difference(c.metric, p.paperEffect, true),
      p.powerAtPaper === null ? "n/a" : percent(p.powerAtPaper),
      p.paperEffect === null
        ? "n/a"
        : p.seedsNeeded === null
        ? `> ${SEED_CAP}`
        : String(p.seedsNeeded),
      p.note ?? "",
    ];
  });
  return [
    "## Power",
    "",
    `What each claim's test can detect at this study's ${r.seeds} seeds per cell: the smallest ` +
    `difference a two-sided Welch test (a one-sample t-test against 1 for the Lemma 4.2 ` +
    `multiplier) detects with probability ${r.power} at α = ${r.alpha}, from the per-seed ` +
    `standard deviations below; the power at the paper's effect (relative effects taken of the ` +
    `reference cell's mean); and the seeds per cell that effect needs. Power is exact, from the ` +
    `noncentral t distribution with the Welch–Satterthwaite degrees of freedom of these ` +
    `spreads. An inconclusive verdict where the detectable difference exceeds the paper's ` +
    `effect says the study was too small to tell, not that the effect is absent. Plan a grid ` +
    `with \`deno task study power\` before running it.`,
    "",
    markdownTable(
      [
        "claim",
        "per-seed sd",
        "detectable difference",
        "paper's effect",
        "power at it",
        "seeds needed",
        "note",
      ],
      rows,
    ),
    "",
  ];
}

/** A Markdown link to a file (a path from the working directory) from the page in `folder`. */
function fileLink(path: string, folder: string): string {
  return `[${path}](${relative(resolve(folder), resolve(path))})`;
}

function setupSection(r: StudyResults, folder: string): string[] {
  const rows = r.cells.map((c) => [
    c.id,
    fileLink(c.configFile, folder),
    c.setup.workflow,
    c.setup.estimator,
    c.setup.weights,
    c.setup.models,
    String(c.setup.steps),
    `${c.runs.length}/${c.plannedRuns}`,
  ]);
  // A study.json from before the report stated the update scheme (v1) renders as it was.
  const withUpdates = r.cells.some((c) => c.setup.updates !== undefined);
  const sizes = r.cells.map((c) => [
    c.id,
    c.setup.batch,
    ...(withUpdates ? [c.setup.updates ?? "not recorded"] : []),
    c.setup.sampling,
    c.setup.trainable,
    c.setup.lr,
    count(c.trainableParameters),
    c.setup.evaluation,
  ]);
  const tasks = [...new Set(r.cells.map((c) => c.setup.tasks))];
  return [
    "## Setup",
    "",
    `The grid is declared in ${fileLink(r.gridFile, folder)}: ${r.cells.length} cells, each an ` +
    `experiment config run for seeds 0–${r.seeds - 1}` +
    (r.stepsOverride === null ? "" : `, every cell's steps overridden to ${r.stepsOverride}`) +
    `. Tasks: ${tasks.join("; ")}.`,
    "",
    markdownTable(
      ["cell", "config", "workflow", "estimator", "weights", "models", "steps", "runs"],
      rows,
    ),
    "",
    markdownTable(
      [
        "cell",
        "batch per step",
        ...(withUpdates ? ["updates per batch; loss"] : []),
        "sampling",
        "trainable",
        "lr",
        "trainable params",
        "evaluation",
      ],
      sizes,
    ),
    "",
    `Accuracy is measured once, after the last training step, on the held-out validation ` +
    `problems: avg@k is the mean share of correct samples per problem, pass@k the share of ` +
    `problems with a correct sample (k samples per problem). A cell's value is the mean over its ` +
    `runs (seeds) ± the standard error of the mean, with the 95% confidence interval of the mean ` +
    `(Student's t, n − 1 degrees of freedom) in brackets. Differences between cells are Welch's ` +
    `two-sided t-tests over per-run values, with the 95% CI of the difference; the Lemma 4.2 ` +
    `multiplier is tested against 1 with a one-sample t-test. A verdict is **agrees** when the ` +
    `difference is significant at α = ${r.alpha} in the paper's direction, **disagrees** when ` +
    `it is significant the other way, inconclusive otherwise (a "not lower" claim agrees unless ` +
    `the cell is significantly lower). Gradient norms are each agent's part of its worker ` +
    `group's update, before clipping; a spike is a step above ${r.spikeMultiple}× the median of ` +
    `the agent's earlier steps; steps with an exactly zero gradient (every advantage 0) carry no ` +
    `signal and are left out of median, max/median and spikes (their count is shown). ` +
    `Accuracy figures are in percent.`,
    "",
  ];
}

function verdictCounts(claims: readonly ClaimResult[]): string {
  const counts = new Map<string, number>();
  for (const c of claims) counts.set(c.verdict, (counts.get(c.verdict) ?? 0) + 1);
  return ["agrees", "disagrees", "inconclusive", "not testable", "pending"]
    .filter((v) => counts.has(v))
    .map((v) => `${counts.get(v)} ${v}`)
    .join(", ");
}

function accuracySection(r: StudyResults, charts: readonly ChartFile[]): string[] {
  return [
    "## Accuracy per cell",
    "",
    ...figures(charts, "accuracy"),
    markdownTable(
      ["cell", "runs", "avg@k", "pass@k", "k", "tokens/question", "wall time per run"],
      r.cells.map((c) => [
        c.id,
        String(c.runs.length),
        stat(c.accuracy.avg, true),
        stat(c.accuracy.pass, true),
        String(c.k),
        figure(c.tokensPerQuestion),
        c.seconds.mean === null ? "n/a" : formatDuration(c.seconds.mean),
      ]),
    ),
    "",
  ];
}

function figures(charts: readonly ChartFile[], section: string): string[] {
  return charts.filter((c) => c.section === section).flatMap((c) => [
    `![${c.alt}](${c.file})`,
    "",
  ]);
}

function stabilityTable(cells: readonly CellResult[]): string[] {
  const rows = cells.flatMap((c) =>
    c.agents.map((a) => [
      c.id,
      a.agent,
      String(a.steps - a.zeroSteps),
      String(a.zeroSteps),
      stat(a.median, false),
      stat(a.maxOverMedian, false),
      String(a.spikes),
      String(a.nonFinite),
      stat(a.multiplier, false),
      String(a.unboundedMultipliers),
    ])
  );
  if (rows.length === 0) return [];
  return [
    "Per agent, over runs: informative and zero-gradient steps (totals), median gradient norm " +
    "and max/median (mean ± SEM [95% CI] over runs), spikes and non-finite steps (totals), the " +
    "Lemma 4.2 multiplier (per-run mean over steps of its finite values, then over runs), and " +
    "the prompt groups where it is unbounded: every trajectory earned the same reward (σ = 0) " +
    "while the agent's action rewards differ from it (an invalid-action penalty), so a global " +
    "baseline divides a nonzero difference by ε.",
    "",
    markdownTable(
      [
        "cell",
        "agent",
        "steps",
        "zero-grad",
        "median",
        "max/median",
        "spikes",
        "non-finite",
        "multiplier",
        "unbounded",
      ],
      rows,
    ),
    "",
  ];
}

function criticTable(cells: readonly CellResult[]): string[] {
  const rows = cells.flatMap((c) =>
    c.critic.map((r) => [
      c.id,
      String(r.round),
      stat(r.improvement, true),
      stat(r.degradation, true),
      stat(r.accuracy, true),
    ])
  );
  if (rows.length === 0) return [];
  return [
    "Critic rounds on the evaluation debates: improvement is the share of questions whose " +
    "generators' majority answer was wrong and the round's critics' majority right, degradation " +
    "the reverse, round accuracy the share of the round's answers that are right.",
    "",
    markdownTable(["cell", "critic round", "improvement", "degradation", "round accuracy"], rows),
    "",
  ];
}

function costTable(baseline: CellResult, cells: readonly CellResult[]): string[] {
  return [
    markdownTable(
      [
        "cell",
        "tokens/question",
        "turns/trajectory",
        "trainable params",
        `avg@k gain per trainable parameter vs ${baseline.id}`,
      ],
      cells.map((c) => {
        const gain = c.id === baseline.id || c.accuracy.avg.mean === null ||
            baseline.accuracy.avg.mean === null || !c.trainableParameters
          ? null
          : gainPerParameter(
            c.accuracy.avg.mean,
            baseline.accuracy.avg.mean,
            c.trainableParameters,
          );
        return [
          c.id,
          figure(c.tokensPerQuestion),
          figure(c.turnsPerTrajectory),
          count(c.trainableParameters),
          figure(gain),
        ];
      }),
    ),
    "",
  ];
}

function comparisonSection(
  r: StudyResults,
  comparison: ComparisonResult,
  charts: readonly ChartFile[],
): string[] {
  const byId = new Map(r.cells.map((c) => [c.id, c]));
  const baseline = byId.get(comparison.baseline)!;
  const cells = [comparison.baseline, ...comparison.cells].map((id) => byId.get(id)!);
  const accuracyRows = comparison.cells.map((id) => byId.get(id)!).map((c) => {
    const test = (metric: "avg" | "pass") =>
      c.runs.length === 0 || baseline.runs.length === 0 ? "runs pending" : testText(
        welchTest(c.accuracy[metric].samples, baseline.accuracy[metric].samples),
        true,
      );
    return [c.id, test("avg"), test("pass")];
  });
  return [
    `## ${comparison.title}`,
    "",
    ...(comparison.note ? [comparison.note, ""] : []),
    `Each cell minus the baseline ${comparison.baseline} (points, 95% CI, Welch p):`,
    "",
    markdownTable(["cell", `avg@${baseline.k}`, `pass@${baseline.k}`], accuracyRows),
    "",
    ...(comparison.claims.length === 0 ? [] : [
      "Claims:",
      "",
      claimsTable(r, comparison.claims),
      "",
    ]),
    ...stabilityTable(cells.filter((c) => c.runs.length > 0)),
    ...criticTable(cells),
    ...costTable(baseline, cells),
    ...figures(charts, comparison.id),
  ];
}

function replayText(x: ReplayResult): string[] {
  const rec = x.record;
  switch (x.status) {
    case "identical":
      return [
        rec!.runId,
        `identical through step ${rec!.identicalThrough} (${rec!.mode}, ${rec!.backend})`,
        String(rec!.compared),
        formatDuration(rec!.seconds),
      ];
    case "diverged": {
      const d = rec!.firstDivergence;
      return [
        rec!.runId,
        `**diverged**: ${d ? `${d.type} at step ${d.step} (${d.reason})` : "out of tolerance"}`,
        String(rec!.compared),
        formatDuration(rec!.seconds),
      ];
    }
    case "error":
      return [rec!.runId, `**error**: ${rec!.error?.split("\n").at(-1)}`, "0", "—"];
    case "stale":
      return ["—", "checked run changed since its replay; rerun the study", "—", "—"];
    case "not checked":
      return ["—", "not checked yet", "—", "—"];
  }
}

function timeSection(r: StudyResults): string[] {
  const t = r.time;
  const list = (xs: readonly string[]) => xs.length ? xs.join(", ") : "n/a";
  return [
    "## Wall time, software and hardware",
    "",
    t.runs === 0
      ? "No run has completed yet."
      : `${t.runs} runs, logged from ${t.firstStart} to ${t.lastEnd}: ` +
        `${formatDuration(t.spanSeconds)} of wall time, ${
          formatDuration(t.summedSeconds)
        } summed ` +
        `over runs (runs proceed side by side, one thread each), plus ` +
        `${formatDuration(t.replaySeconds)} for the replay spot-checks.`,
    "",
    markdownTable(
      ["cell", "runs", "per run (mean ± SEM)", "summed"],
      r.cells.map((c) => [
        c.id,
        String(c.runs.length),
        c.seconds.mean === null
          ? "n/a"
          : `${formatDuration(c.seconds.mean)}${
            c.seconds.sem === null ? "" : ` ± ${formatDuration(c.seconds.sem)}`
          }`,
        formatDuration(c.seconds.samples.reduce((s, x) => s + x, 0)),
      ]),
    ),
    "",
    `Software, as the runs recorded it: Deno ${list(r.software.deno)}; onnxruntime ` +
    `${list(r.software.onnxruntime)}; execution provider ${list(r.software.executionProvider)}; ` +
    `${list(r.software.threads)} thread(s) per run; ${list(r.software.platform)}; code version ` +
    `${list(r.software.codeVersion)}.`,
    "",
    `Hardware of the machine that generated this report: ${r.hardware.cpuModel}, ` +
    `${r.hardware.cores} logical cores (${r.hardware.os}/${r.hardware.arch}).`,
    "",
  ];
}

/**
 * Renders the results as the report's Markdown for a page in `folder`, embedding `charts`
 * (written beside it) and linking the grid and config files relative to it.
 *
 * @example
 * ```ts
 * import { type StudyResults, studyCharts } from "./mod.ts";
 * declare const results: StudyResults;
 * const page = renderStudy(results, studyCharts(results), "docs/study");
 * await Deno.writeTextFile("docs/study/README.md", page);
 * ```
 */
export function renderStudy(
  r: StudyResults,
  charts: readonly ChartFile[],
  folder: string,
): string {
  const claims = r.comparisons.flatMap((c) => c.claims);
  const planned = r.cells.reduce((s, c) => s + c.plannedRuns, 0);
  return [
    `# ${r.title}`,
    "",
    `Generated by \`deno task study\` from the event log alone (store \`${r.store}\`, ` +
    `${r.time.runs} of ${planned} planned runs complete). Regenerate this page from the same ` +
    `store with \`deno task study --report-only\`; every number and verdict below is computed ` +
    `from the logged events. The numbers are also in [study.json](study.json).`,
    "",
    ...setupSection(r, folder),
    "## Results against the papers",
    "",
    claims.length === 0
      ? "The grid declares no claims."
      : `${claims.length} checks: ${verdictCounts(claims)}.`,
    "",
    ...(claims.length === 0 ? [] : [claimsTable(r, claims), ""]),
    ...(claims.length === 0 ? [] : powerSection(r, claims)),
    ...(r.previous === null ? [] : previousSection(r.previous, folder)),
    ...accuracySection(r, charts),
    ...r.comparisons.flatMap((c) => comparisonSection(r, c, charts)),
    "## Replay spot-checks",
    "",
    "One run per cell (its lowest completed seed) re-executed with the replay module, as " +
    "`deno task replay` does; every logged event must regenerate bit-identically.",
    "",
    markdownTable(
      ["cell", "run", "result", "events compared", "replay time"],
      r.replays.map((x) => [x.cell, ...replayText(x)]),
    ),
    "",
    ...timeSection(r),
  ].join("\n");
}
