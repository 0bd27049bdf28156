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
import { type ClaimPower, type PairedPower, SEED_CAP } from "./claim-power.ts";
import { type DifferenceTest, welchTest } from "./claims.ts";
import { formatDuration } from "./format-duration.ts";
import type { ClaimMetric } from "./grid-schema.ts";
import type { SampleStat } from "./sample-stat.ts";
import type { ChartFile } from "./study-charts.ts";
import { benchmarkText, SHORT_HASH } from "./cell-benchmarks.ts";
import { followsText } from "./cell-follows.ts";
import type { Pairing } from "./pairing.ts";
import { POWER_PLAN_COLUMNS, POWER_PLAN_LEGEND, powerPlanRow } from "./power-plan-table.ts";
import type {
  ChangeCause,
  ClaimChange,
  ClaimOutcome,
  PreviousStudy,
  SetupChange,
} from "./previous-study.ts";
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
  return c.reference === null
    ? `${stat(c.value, rate)} vs 1`
    : `${stat(c.value, rate)} vs ${stat(c.reference, rate)}`;
}

/** The claims table's Welch column (the one-sample test against 1 for a one-cell claim). */
function welchText(c: ClaimResult): string {
  if (c.verdict === "pending") return "–";
  const text = testText(c.test, RATES.includes(c.metric));
  return c.against === null ? `one-sample: ${text}` : text;
}

/** `seed 3 only in a; seeds 1, 2 only in b`. */
function unmatchedText(p: Pairing): string {
  return p.unmatched.map((u) =>
    `seed${u.seeds.length > 1 ? "s" : ""} ${u.seeds.join(", ")} only in ${u.cell}`
  ).join("; ");
}

/** The claims table's paired column: difference, CI, p and r over the seeds both cells ran. */
function pairedText(c: ClaimResult): string {
  if (c.against === null) return "–";
  if (c.verdict === "pending") return "runs pending";
  const p = c.pairing ?? null;
  if (p === null) return "n/a";
  if (!p.paired) return `not paired: ${p.reason}`;
  if (!c.paired) return "n/a";
  const r = c.paired.correlation === null
    ? "r undefined (no spread)"
    : `r = ${c.paired.correlation.toFixed(2)}`;
  const subset = p.unmatched.length === 0
    ? ""
    : `; on the ${p.seeds.length} common seeds (${unmatchedText(p)})`;
  return `${testText(c.paired, RATES.includes(c.metric))}, ${r}${subset}`;
}

const TEST_NAMES = { paired: "paired t", welch: "Welch", "one-sample": "one-sample t" } as const;

function decidedByText(c: ClaimResult): string {
  if (c.verdict === "pending") return "–";
  return TEST_NAMES[c.decidedBy];
}

function claimsTable(results: StudyResults, claims: readonly ClaimResult[]): string {
  const k = (cell: string) => results.cells.find((c) => c.id === cell)!.k;
  return markdownTable(
    [
      "claim",
      "paper",
      "this study",
      "difference, Welch",
      "difference, paired by seed",
      "verdict",
      "verdict from",
      `power (${results.seeds} seeds)`,
    ],
    claims.map((c) => [
      claimText(c, k(c.cell)),
      c.paper,
      studyNumber(c),
      welchText(c),
      pairedText(c),
      verdictText(c),
      decidedByText(c),
      powerText(c),
    ]),
  );
}

/** One study's verdict of a claim, with its difference and p (and the test, where paired). */
function outcomeText(o: ClaimOutcome | null, c: ClaimChange): string {
  if (o === null) return "not in this grid";
  if (o.diff === null) return o.verdict;
  const p = o.p === null ? "" : `, p = ${pValue(o.p)}${o.decidedBy === "paired" ? " paired" : ""}`;
  return `${verdictText(o)} (${difference(c.metric, o.diff, true)}${p}; k = ${o.k})`;
}

/** How the changes table names a cause. */
const CAUSE_NAMES: Readonly<Record<ChangeCause, string>> = {
  "paired-test": "paired test",
  benchmark: "benchmark",
  difficulty: "difficulty",
  preset: "preset",
  "cell-config": "cell config",
};

/** Why a claim's verdict moved: its causes with their setup changes, then the grid's note. */
function whyText(c: ClaimChange, changes: readonly SetupChange[]): string {
  const mine = changes.filter((s) => c.setupChanges.includes(s.id));
  const causes = c.causes.map((cause) => {
    if (cause === "paired-test") return `paired test (Welch: ${c.after?.welchVerdict})`;
    const ids = mine.filter((s) => s.cause === cause).map((s) => s.id);
    return `${CAUSE_NAMES[cause]} (${ids.join(", ")})`;
  });
  const found = causes.length > 0
    ? causes.join("; ")
    : c.setup === undefined
    ? "no change of its cells' setups found"
    : null;
  // A file written before causes were named (v2's comparison with v1) lists its setup lines.
  const lines = c.setup !== undefined && c.setup.length > 0 ? `setup: ${c.setup.join("; ")}` : null;
  const sentence = (x: string) => /[.!?]$/.test(x) ? x : `${x}.`;
  return [found, c.note, lines].filter((x) => x !== null).map(sentence).join(" ") || "–";
}

/**
 * The earlier study's claims beside this one's: the setup changes once each, the verdicts that
 * moved and why, and the claims this study does not rerun.
 */
/**
 * The power planned before the grid ran, from the earlier study's per-seed values: what each
 * claim's test could detect at this grid's seeds, and the seeds the paper's effect needs, under
 * Welch's and the paired test (`deno task study power`). Absent where the file holds no plan.
 */
function plannedPowerSection(p: PreviousStudy, seeds: number, folder: string): string[] {
  if (p.plannedPower === undefined || p.plannedPower.length === 0) return [];
  const link = relative(resolve(folder), resolve(p.file));
  return [
    "## Power planned before the grid",
    "",
    `Before any run of this grid: each claim's power at ${seeds} seeds per cell and the cells' ` +
    `evaluation sizes, from the per-seed values of ${p.title} ([${p.title}'s study.json](${link})), ` +
    `as \`deno task study power\` gives it; the power measured on this study's own runs follows ` +
    `the results. ${POWER_PLAN_LEGEND}`,
    "",
    markdownTable([...POWER_PLAN_COLUMNS], p.plannedPower.map(powerPlanRow)),
    "",
  ];
}

function previousSection(p: PreviousStudy, folder: string): string[] {
  const earlier = p.claims.filter((c) => c.before !== null);
  const added = p.claims.filter((c) => c.before === null);
  const notRerun = earlier.filter((c) => c.notRerun.length > 0);
  const dropped = earlier.filter((c) => c.after === null && c.notRerun.length === 0);
  const rerun = earlier.filter((c) => c.after !== null);
  const moved = rerun.filter((c) => c.changed);
  const changes = p.setupChanges ?? [];
  const link = relative(resolve(folder), resolve(p.file));
  const k = (c: ClaimChange) => c.after?.k ?? c.before!.k;
  return [
    `## Changes from ${p.title}`,
    "",
    `Every claim of ${p.title} ([${link}](${link})) beside its verdict in this study: ` +
    `${moved.length} of the ${rerun.length} claims rerun here moved; ${notRerun.length} are not ` +
    `rerun (a cell is not in this grid)` +
    (dropped.length > 0 ? `, ${dropped.length} are no longer made` : "") +
    `; ${added.length} claims are new in this study. Changed for every cell:`,
    "",
    ...p.changes.map((c) => `- ${c}`),
    ...(p.seeds ? [`- Seeds per cell: ${p.seeds.before} → ${p.seeds.after}.`] : []),
    "",
    ...(changes.length === 0 ? [] : [
      `What changed in the setups of the cells both studies ran, each change once with the ` +
      `cells it applies to (the reasons below refer to them by id). Causes: **benchmark**, ` +
      `what the runs were evaluated on (the problems' SHA-256, the split sizes, the ` +
      `evaluation); **difficulty**, the tasks; **preset**, a setting the cell's config leaves ` +
      `to its preset; **cell config**, a setting the cell's own file sets.`,
      "",
      markdownTable(
        ["id", "cause", "what", p.title, "this study", "cells"],
        changes.map((s) => [
          s.id,
          CAUSE_NAMES[s.cause],
          s.key,
          s.before,
          s.after,
          s.cells.join(", "),
        ]),
      ),
      "",
    ]),
    moved.length === 0
      ? `No verdict of a claim rerun here moved.`
      : `Verdicts that moved, and why: **paired test** where this study's verdict is the ` +
        `paired test's and Welch's test on the same runs gives another (Welch's verdict in ` +
        `brackets); the setup changes of the claim's cells where Welch's verdict moved too; ` +
        `then the grid's note.`,
    "",
    ...(moved.length === 0 ? [] : [
      markdownTable(
        ["claim", p.title, "this study", "why"],
        moved.map((c) => [
          claimText(c, k(c)),
          outcomeText(c.before, c),
          outcomeText(c.after, c),
          whyText(c, changes),
        ]),
      ),
      "",
    ]),
    ...(notRerun.length === 0 ? [] : [
      `Not rerun in this study (their cells are not in this grid): ${p.title}'s verdicts stand ` +
      `as ${p.title} stated them.`,
      "",
      markdownTable(
        ["claim", p.title, "not in this grid"],
        notRerun.map((c) => [
          claimText(c, k(c)),
          outcomeText(c.before, c),
          c.notRerun.join(", "),
        ]),
      ),
      "",
    ]),
    ...(dropped.length === 0 ? [] : [
      `No longer claimed by this grid: ${
        dropped.map((c) => `${claimText(c, k(c))} (${c.before!.verdict})`).join("; ")
      }.`,
      "",
    ]),
    `${rerun.length - moved.length} verdicts of claims rerun here did not move.`,
    "",
  ];
}

/** A difference in the metric's units: points for rates, a plain figure otherwise. */
function difference(metric: ClaimMetric, x: number, signed: boolean): string {
  if (RATES.includes(metric)) return signed ? signedPoints(x) : points(x);
  return (signed && x >= 0 ? "+" : "") + figure(x);
}

/** One test's power: what the seeds detect, and the paper's effect against it. */
function testPowerText(
  c: ClaimResult,
  p: Pick<ClaimPower, "mde" | "powerAtPaper" | "seedsNeeded" | "note">,
): string {
  if (p.mde === null) return `n/a (${p.note})`;
  const mde = `detects ±${difference(c.metric, p.mde, false)}`;
  const effect = c.power.paperEffect;
  if (effect === null) return mde;
  const seeds = p.seedsNeeded === null ? `> ${SEED_CAP}` : String(p.seedsNeeded);
  return `${mde}; paper ${difference(c.metric, effect, true)}: power ` +
    `${percent(p.powerAtPaper!)}, ${seeds} seeds needed`;
}

/**
 * The claims table's power cell: Welch's test's power, and the paired test's where the design is
 * paired, the test that gives the verdict first.
 */
function powerText(c: ClaimResult): string {
  const welch = testPowerText(c, c.power);
  const paired = c.power.paired ?? null;
  // A paired design without figures for a reason Welch's states already (no spread).
  if (paired === null || (paired.mde === null && paired.note === null)) return welch;
  const both = [`paired: ${testPowerText(c, paired)}`, `Welch: ${welch}`];
  return (c.decidedBy === "paired" ? both : both.reverse()).join("; ");
}

/** The paired columns of the power table: sd of the differences (r), MDE, power, seeds. */
function pairedPowerCells(c: ClaimResult, p: PairedPower | null): string[] {
  if (c.against === null) return ["–", "", "", ""];
  if (p === null) return [c.pairing?.paired === false ? "not paired" : "n/a", "", "", ""];
  if (p.sd === null || p.mde === null) {
    return [p.note === null ? "n/a" : `n/a (${p.note})`, "", "", ""];
  }
  const r = p.correlation === null ? "" : ` (r = ${p.correlation.toFixed(2)})`;
  return [
    `${difference(c.metric, p.sd, false)}${r}`,
    difference(c.metric, p.mde, false),
    p.powerAtPaper === null ? "n/a" : percent(p.powerAtPaper),
    c.power.paperEffect === null
      ? "n/a"
      : p.seedsNeeded === null
      ? `> ${SEED_CAP}`
      : String(p.seedsNeeded),
  ];
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
      ...pairedPowerCells(c, p.paired ?? null),
      [p.note, p.paired && p.paired.mde !== null ? p.paired.note : null]
        .filter((x) => x !== null).join("; "),
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
    `spreads. Where the design is paired the paired t-test's power stands beside it: the ` +
    `one-sample t-test of the per-seed differences (noncentral t with n − 1 degrees of ` +
    `freedom), from the standard deviation of the differences over the seeds both cells ran ` +
    `(r: the correlation of the two cells' per-seed values; the higher, the smaller the ` +
    `differences' spread and the fewer seeds the paired test needs). An inconclusive verdict ` +
    `where the detectable difference exceeds the paper's effect says the study was too small to ` +
    `tell, not that the effect is absent. Plan a grid with \`deno task study power\` before ` +
    `running it.`,
    "",
    markdownTable(
      [
        "claim",
        "per-seed sd",
        "detectable difference (Welch)",
        "paper's effect",
        "power at it (Welch)",
        "seeds needed (Welch)",
        "sd of per-seed differences",
        "detectable difference (paired)",
        "power at it (paired)",
        "seeds needed (paired)",
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

/** The methods sentences on the tests: Welch's, the paired test and when it gives the verdict. */
function testsMethods(r: StudyResults): string {
  const pairings = r.comparisons.flatMap((c) => c.claims).map((c) => c.pairing ?? null);
  const byTasks = pairings.some((p) => p?.basis === "same-tasks");
  return `Differences between cells are tested over per-run values two ways, each with the 95% ` +
    `CI of the difference: Welch's two-sided t-test, and, where the design is paired, the ` +
    `paired t-test on the per-seed differences (scipy's ttest_rel), with r the correlation of ` +
    `the two cells' per-seed values. The design is paired when both cells ran the same seeds: ` +
    `the runs of a seed share its training problems and their order and every keyed random ` +
    `stream, which is the whole design for gradient norms and multipliers; accuracy and the ` +
    `critic rate also need each seed's runs evaluated on the same problems, as the SHA-256 of ` +
    `every benchmark that a run records when it starts shows. ` +
    (byTasks
      ? `Runs without those hashes (recorded before runs stated them) pair on the cells' ` +
        `tasks: the same generated tasks give a seed's runs the same problems in every cell ` +
        `(each seed drew its own validation problems, shared by the cells of that seed), so ` +
        `pairing by seed holds for them too. `
      : "") +
    `Seeds only one cell completed are left out of the paired test, and the table names them. ` +
    `Where the design is paired the verdict is the paired test's (Welch's where it is ` +
    `undefined, every per-seed difference 0), and the table says which test gave it; the ` +
    `Lemma 4.2 multiplier is tested against 1 with a one-sample t-test.`;
}

/** A rate in points, or what stands in for it. */
function pointsOr(x: number | null, missing: string): string {
  return x === null ? missing : points(x);
}

/**
 * Each cell's reference preset, benchmark and start and end accuracy (empty for a study.json
 * from before they were reported), then the references in full, once per preset.
 */
function startTable(r: StudyResults): string[] {
  if (r.cells.every((c) => c.follows === null && c.start === null && c.benchmarks.length === 0)) {
    return [];
  }
  const otherProblems = r.cells.some((c) => c.start?.sameBenchmark === false);
  const rows = r.cells.map((c) => {
    const s = c.start;
    const mark = s?.sameBenchmark === false ? " †" : "";
    const startValue = (x: number | null | undefined) =>
      s === null ? "–" : s.complete ? `${pointsOr(x ?? null, "n/a")}${mark}` : "pending";
    return [
      c.id,
      c.follows === null ? "not recorded" : followsText(c.follows),
      benchmarkText(c.benchmarks),
      s === null ? "none" : s.cell === c.id ? `own (${s.runId})` : `${s.cell}'s`,
      String(c.k),
      startValue(s?.avg),
      pointsOr(c.accuracy.avg.mean, "n/a"),
      startValue(s?.pass),
      pointsOr(c.accuracy.pass.mean, "n/a"),
    ];
  });
  const references = [
    ...new Map(
      r.cells.flatMap((c) =>
        c.follows?.preset && c.follows.reference
          ? [[c.follows.preset, c.follows.reference] as const]
          : []
      ),
    ),
  ];
  return [
    `Each cell's reference, benchmark and accuracy before and after training. **follows**: the ` +
    `preset its config extends and the reference that preset follows (in full below). ` +
    `**benchmark**: what its runs were evaluated on, the first ${SHORT_HASH} hex digits of the ` +
    `SHA-256 of the problems (in full in study.json); one hash means every seed was evaluated ` +
    `on the same problems. **start**: the initial team evaluated once (its config run for 0 ` +
    `steps, seed 0), in the start run of the cell named; cells whose initial teams are the same ` +
    `(they differ only in estimator, loss, rewards or weight sharing, and every LoRA adapter is ` +
    `zero before the first update) share one. **end**: the mean over seeds after training (the ` +
    `accuracy table has its SEM and CI).`,
    "",
    markdownTable(
      [
        "cell",
        "follows",
        "benchmark",
        "start run",
        "k",
        "start avg@k",
        "end avg@k",
        "start pass@k",
        "end pass@k",
      ],
      rows,
    ),
    "",
    ...(otherProblems
      ? ["† The start run was evaluated on other problems than the cell's runs.", ""]
      : []),
    ...(references.length === 0 ? [] : [
      "References of the presets:",
      "",
      ...references.map(([preset, reference]) => `- \`${preset}\`: ${reference}`),
      "",
    ]),
  ];
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
  // And one from before it stated the rewards (v1, v2).
  const withRewards = r.cells.some((c) => c.setup.rewards !== undefined);
  const sizes = r.cells.map((c) => [
    c.id,
    c.setup.batch,
    ...(withUpdates ? [c.setup.updates ?? "not recorded"] : []),
    c.setup.sampling,
    c.setup.trainable,
    c.setup.lr,
    count(c.trainableParameters),
    c.setup.evaluation,
    ...(withRewards ? [c.setup.rewards ?? "not recorded"] : []),
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
        ...(withRewards ? ["rewards"] : []),
      ],
      sizes,
    ),
    "",
    ...startTable(r),
    `Accuracy is measured once, after the last training step, on the held-out validation ` +
    `problems: avg@k is the mean share of correct samples per problem, pass@k the share of ` +
    `problems with a correct sample (k samples per problem). A cell's value is the mean over its ` +
    `runs (seeds) ± the standard error of the mean, with the 95% confidence interval of the mean ` +
    `(Student's t, n − 1 degrees of freedom) in brackets. ${testsMethods(r)} A verdict is ` +
    `**agrees** when the ` +
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
    t.runs === 0 ? "No run has completed yet." : `${t.runs} runs` +
      (t.startRuns ? ` and ${t.startRuns} start run${t.startRuns === 1 ? "" : "s"}` : "") +
      `, logged from ${t.firstStart} to ${t.lastEnd}: ` +
      `${formatDuration(t.spanSeconds)} of wall time` +
      (t.busySeconds !== undefined && t.busySeconds < t.spanSeconds - 60
        ? ` (${formatDuration(t.busySeconds)} of it with a training or start run under way)`
        : "") +
      `, ${formatDuration(t.summedSeconds)} summed ` +
      `over runs (runs proceed side by side, one thread each)` +
      (t.startRuns ? ` and ${formatDuration(t.startSeconds ?? 0)} over start runs` : "") +
      `, plus ${formatDuration(t.replaySeconds)} for the replay spot-checks.`,
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
    ...(r.previous === null ? [] : plannedPowerSection(r.previous, r.seeds, folder)),
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
