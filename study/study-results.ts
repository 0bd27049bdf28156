/**
 * Every number of the study report, computed from the completed runs (read from the event log's
 * projections) and the replay records: per cell its setup, accuracy (avg@k and pass@k via the
 * report module's `buildReport`), per-agent gradient-norm stability and Lemma 4.2 multiplier,
 * critic effect per debate round, cost and wall time; per comparison each paper claim with its
 * test and verdict. Serialized as `study.json` and rendered as the Markdown report and charts.
 */
import { relative } from "node:path";
import { AVERAGE, buildReport, type Report, type RunSummary } from "../analysis/mod.ts";
import type { StreamHead } from "../events/mod.ts";
import type { NormalizedConfig } from "../engine/config/mod.ts";
import { agentStability } from "./agent-stability.ts";
import { type CellBenchmark, cellBenchmarks, sameBenchmark } from "./cell-benchmarks.ts";
import { type CellFollows, cellFollows } from "./cell-follows.ts";
import { type CellSetup, cellSetup } from "./cell-setup.ts";
import { type CellStart, cellStart } from "./cell-start.ts";
import { type ClaimPower, claimPower, type EvaluationSize } from "./claim-power.ts";
import {
  type DifferenceTest,
  oneSampleTest,
  type PairedTest,
  pairedTest,
  type Verdict,
  verdictOf,
  type VerdictTest,
  verdictTest,
  welchTest,
} from "./claims.ts";
import {
  AGENT_METRICS,
  type ChartKind,
  type Claim,
  type ClaimMetric,
  type Comparison,
  type Expectation,
  ONE_CELL_EXPECTATIONS,
  type PaperEffect,
} from "./grid-schema.ts";
import type { Hardware } from "./hardware.ts";
import type { Grid, GridCell } from "./load-grid.ts";
import {
  type Pairing,
  pairingOf,
  type PairSide,
  sampleSeeds,
  valuesAt,
  withSeeds,
} from "./pairing.ts";
import type { PlannedRun, PlannedStart } from "./plan-runs.ts";
import type { PreviousStudy } from "./previous-study.ts";
import type { ReplayRecord } from "./replay-records.ts";
import { type SampleStat, sampleStat } from "./sample-stat.ts";
import type { AgentSeries, RunBenchmark, StudyRun } from "./study-data.ts";
import { evaluationSize } from "./evaluation-size.ts";

/** The config key under which runs are grouped by cell for the report module. */
export const CELL_KEY = "study.cell";

/** One run's values over steps, for the charts. */
export interface RunSeries {
  readonly seed: number;
  readonly steps: readonly number[];
  readonly values: readonly number[];
}

/** One agent of one cell, over the cell's runs. */
export interface AgentResult {
  readonly agent: string;
  readonly steps: number;
  readonly zeroSteps: number;
  readonly nonFinite: number;
  readonly spikes: number;
  readonly median: SampleStat;
  /** Per-run max/median, over runs where it is finite. */
  readonly maxOverMedian: SampleStat;
  readonly spikesPerRun: SampleStat;
  /** Per-run mean of the finite per-step multipliers. */
  readonly multiplier: SampleStat;
  /** Prompt groups (totals over runs) where the multiplier is unbounded (global σ = 0). */
  readonly unboundedMultipliers: number;
  readonly gradNorms: readonly RunSeries[];
  readonly multipliers: readonly RunSeries[];
}

/** One debate critic round of one cell (round 1 = first critic round). */
export interface CriticRoundResult {
  readonly round: number;
  readonly improvement: SampleStat;
  readonly degradation: SampleStat;
  readonly accuracy: SampleStat;
}

/** One cell over its completed runs. */
export interface CellResult {
  readonly id: string;
  readonly title: string;
  readonly configFile: string;
  readonly setup: CellSetup;
  readonly plannedRuns: number;
  readonly runs: readonly {
    readonly runId: string;
    readonly seed: number;
    readonly avg: number;
    readonly pass: number;
    readonly seconds: number;
    /**
     * SHA-256 of each benchmark's problems the run was evaluated on, by benchmark name, as its
     * `run.started` recorded it (the `run_benchmarks` projection): what tells a claim's accuracy
     * runs were evaluated on the same problems (study/pairing.ts). Absent for runs recorded before
     * it and in study.json files written before it (pairing then rests on the cells' tasks).
     */
    readonly benchmarks?: Readonly<Record<string, RunBenchmark>>;
  }[];
  /** Planned runs not complete in the store. */
  readonly pending: readonly string[];
  /** Samples per evaluated problem (the k of avg@k and pass@k). */
  readonly k: number;
  /** Problems the final evaluation of each run averages over; null when not known. */
  readonly problems: number | null;
  readonly accuracy: { readonly avg: SampleStat; readonly pass: SampleStat };
  readonly agents: readonly AgentResult[];
  readonly critic: readonly CriticRoundResult[];
  readonly tokensPerQuestion: number | null;
  readonly turnsPerTrajectory: number | null;
  readonly trainableParameters: number | null;
  readonly seconds: SampleStat;
  /** Its accuracy before training (the start run it declares or shares); null without one. */
  readonly start: CellStart | null;
  /** What its runs were evaluated on, by SHA-256 of the problems; empty where not recorded. */
  readonly benchmarks: readonly CellBenchmark[];
  /** The preset its config extends and that preset's reference; null in older study.json. */
  readonly follows: CellFollows | null;
  /**
   * The config its runs recorded (its first run's, else the planned one), without the run's
   * `seed` and `store`: what a later study diffs key by key. Null in older study.json files.
   */
  readonly config: Readonly<Record<string, unknown>> | null;
}

/** Which claim a row is about: the cells, the agent (for agent metrics) and the expectation. */
export interface ClaimIdentity {
  readonly cell: string;
  /** The compared cell; null for a one-cell test against 1. */
  readonly against: string | null;
  readonly agent: string | null;
  readonly metric: ClaimMetric;
  readonly expect: Expectation;
  readonly paper: string;
}

/** One claim (per agent for agent metrics), tested. */
export interface ClaimResult extends ClaimIdentity {
  /** The cell's per-run values (with their seeds where known). */
  readonly value: SampleStat | null;
  readonly reference: SampleStat | null;
  /** Welch's test of the two cells (a one-sample test against 1 for a one-cell claim). */
  readonly test: DifferenceTest | null;
  /** How the two cells' runs pair by seed; null for a one-cell claim. */
  readonly pairing: Pairing | null;
  /** The paired t-test over the pairing's seeds; null when the design is not paired. */
  readonly paired: PairedTest | null;
  /** The test the verdict is taken from. */
  readonly decidedBy: VerdictTest;
  /**
   * Whether every run of both cells was evaluated on the same problems (one benchmark SHA-256
   * per benchmark, the same in both cells: cell-benchmarks.ts `sameBenchmark`); null for a
   * one-cell claim or where a cell's runs recorded none (older study.json files included).
   */
  readonly sameBenchmark: boolean | null;
  readonly verdict: Verdict;
  /** The power of the claim's test at the study's seeds, from its own per-seed spread. */
  readonly power: ClaimPower;
}

/** One comparison of the grid. */
export interface ComparisonResult {
  readonly id: string;
  readonly title: string;
  readonly note: string | null;
  readonly baseline: string;
  readonly cells: readonly string[];
  readonly charts: readonly ChartKind[];
  readonly claims: readonly ClaimResult[];
}

/** A cell's replay spot-check as the report states it. */
export interface ReplayResult {
  readonly cell: string;
  /** identical: checked and matching; stale: the run changed since its check. */
  readonly status: "identical" | "diverged" | "error" | "stale" | "not checked";
  readonly record: ReplayRecord | null;
}

/** Wall time, from the runs' logged start and completion times. */
export interface TimeResult {
  /** Training runs, and their seconds summed. */
  readonly runs: number;
  readonly summedSeconds: number;
  /** Start runs (0 steps), and their seconds summed; absent in older study.json files. */
  readonly startRuns?: number;
  readonly startSeconds?: number;
  /** From the first run's start to the last run's completion (start runs included). */
  readonly spanSeconds: number;
  /**
   * The part of the span with a run under way: the union of the runs' intervals, without the
   * gaps in which none ran (a grid resumed in a later session); absent in older files.
   */
  readonly busySeconds?: number;
  readonly firstStart: string | null;
  readonly lastEnd: string | null;
  readonly replaySeconds: number;
}

/** The software the runs recorded, each field's distinct values. */
export interface SoftwareResult {
  readonly deno: readonly string[];
  readonly onnxruntime: readonly string[];
  readonly executionProvider: readonly string[];
  readonly threads: readonly string[];
  readonly platform: readonly string[];
  readonly codeVersion: readonly string[];
}

/**
 * The seconds covered by at least one of `intervals`: overlapping runs count once, and a gap in
 * which none ran not at all.
 *
 * @example
 * ```ts
 * import { unionSeconds } from "./study-results.ts";
 * unionSeconds([
 *   { startedMs: 0, endedMs: 10_000 },
 *   { startedMs: 5_000, endedMs: 20_000 },
 *   { startedMs: 60_000, endedMs: 70_000 },
 * ]); // 30: 0-20 s and 60-70 s
 * ```
 */
export function unionSeconds(
  intervals: readonly { readonly startedMs: number; readonly endedMs: number }[],
): number {
  let covered = 0;
  let reached = -Infinity;
  for (const { startedMs, endedMs } of [...intervals].sort((a, b) => a.startedMs - b.startedMs)) {
    covered += Math.max(0, endedMs - Math.max(startedMs, reached));
    reached = Math.max(reached, endedMs);
  }
  return covered / 1000;
}

/** Everything the report prints. */
export interface StudyResults {
  readonly kind: "study-results";
  readonly title: string;
  readonly gridFile: string;
  readonly store: string;
  readonly seeds: number;
  readonly stepsOverride: number | null;
  readonly alpha: number;
  /** The power the power analysis asks of each claim's test. */
  readonly power: number;
  readonly spikeMultiple: number;
  readonly cells: readonly CellResult[];
  readonly comparisons: readonly ComparisonResult[];
  readonly replays: readonly ReplayResult[];
  readonly time: TimeResult;
  readonly software: SoftwareResult;
  readonly hardware: Hardware;
  /** The verdicts of the grid's earlier study beside these (null without one). */
  readonly previous: PreviousStudy | null;
}

/** What the results are computed from. */
export interface ResultInputs {
  readonly grid: Grid;
  /** The runs of every cell of the grid (the report covers the whole grid). */
  readonly plan: readonly PlannedRun[];
  /** The completed runs among them, as read from the store. */
  readonly runs: readonly StudyRun[];
  /** The grid's start runs (planStarts); none by default. */
  readonly starts?: readonly PlannedStart[];
  /** The completed start runs, as read from the store. */
  readonly startRuns?: readonly StudyRun[];
  readonly replays: readonly ReplayRecord[];
  /** The store's stream heads, to tell current replay records from stale ones. */
  readonly heads: ReadonlyMap<string, StreamHead>;
  readonly hardware: Hardware;
  readonly store: string;
  readonly seeds: number;
  readonly steps?: number;
}

function labelled(summary: RunSummary, cell: string): RunSummary {
  return { ...summary, config: { ...summary.config, [CELL_KEY]: cell } };
}

function finite(xs: readonly number[]): number[] {
  return xs.filter(Number.isFinite);
}

function runSeries(run: StudyRun, list: readonly AgentSeries[], agent: string): RunSeries[] {
  const s = list.find((x) => x.agent === agent);
  return s ? [{ seed: run.seed, steps: s.steps, values: s.values }] : [];
}

function agentResults(runs: readonly StudyRun[], spikeMultiple: number): AgentResult[] {
  const agents = [...new Set(runs.flatMap((r) => r.gradNorms.map((g) => g.agent)))].sort();
  return agents.map((agent) => {
    const per = runs.flatMap((r) =>
      r.gradNorms.filter((g) => g.agent === agent).map((g) =>
        agentStability(agent, g.values, spikeMultiple)
      )
    );
    const multipliers = runs.flatMap((r) => {
      const xs = finite(r.multipliers.find((m) => m.agent === agent)?.values ?? []);
      return xs.length ? [xs.reduce((s, x) => s + x, 0) / xs.length] : [];
    });
    return {
      agent,
      steps: per.reduce((s, x) => s + x.steps, 0),
      zeroSteps: per.reduce((s, x) => s + x.zeroSteps, 0),
      nonFinite: per.reduce((s, x) => s + x.nonFinite, 0),
      spikes: per.reduce((s, x) => s + x.spikes, 0),
      median: sampleStat(finite(per.map((x) => x.median))),
      maxOverMedian: sampleStat(finite(per.map((x) => x.maxOverMedian))),
      spikesPerRun: sampleStat(per.filter((x) => Number.isFinite(x.median)).map((x) => x.spikes)),
      multiplier: sampleStat(multipliers),
      unboundedMultipliers: runs.reduce((s, r) => s + (r.unboundedMultipliers[agent] ?? 0), 0),
      gradNorms: runs.flatMap((r) => runSeries(r, r.gradNorms, agent)),
      multipliers: runs.flatMap((r) => runSeries(r, r.multipliers, agent)),
    };
  });
}

function criticResults(runs: readonly StudyRun[]): CriticRoundResult[] {
  const rounds = [...new Set(runs.flatMap((r) => r.avg.critic.map((c) => c.round)))]
    .sort((a, b) => a - b);
  return rounds.map((round) => {
    const effects = runs.flatMap((r) => r.avg.critic.filter((c) => c.round === round));
    return {
      round,
      improvement: sampleStat(effects.map((e) => e.improvementRate)),
      degradation: sampleStat(effects.map((e) => e.degradationRate)),
      accuracy: sampleStat(effects.map((e) => e.accuracy)),
    };
  });
}

function accuracyStat(report: Report | null, cell: string): SampleStat {
  const c = report?.accuracy.find((a) => a.group === cell && a.benchmark === AVERAGE);
  return sampleStat(c ? c.samples : []);
}

function cellResult(
  cell: GridCell,
  planned: readonly PlannedRun[],
  runs: readonly StudyRun[],
  reports: { readonly avg: Report | null; readonly pass: Report | null },
  spikeMultiple: number,
  starts: { readonly plan: readonly PlannedStart[]; readonly runs: readonly StudyRun[] },
): CellResult {
  const config = (runs[0]?.config ?? planned[0].config) as unknown as NormalizedConfig;
  const benchmarks = cellBenchmarks(runs);
  const { seed: _seed, store: _store, ...recorded } = config;
  const cost = reports.avg?.cost.find((c) => c.group === cell.id);
  const accuracy = {
    avg: accuracyStat(reports.avg, cell.id),
    pass: accuracyStat(reports.pass, cell.id),
  };
  return {
    id: cell.id,
    title: cell.title,
    configFile: relative(Deno.cwd(), cell.configPath),
    setup: cellSetup(config),
    plannedRuns: planned.length,
    runs: runs.map((r, i) => ({
      runId: r.runId,
      seed: r.seed,
      avg: accuracy.avg.samples[i],
      pass: accuracy.pass.samples[i],
      seconds: r.seconds,
      benchmarks: r.benchmarks,
    })),
    pending: planned.filter((p) => !runs.some((r) => r.runId === p.runId)).map((p) => p.runId),
    k: config.evaluation.n_samples,
    problems: evaluationSize(config).problems,
    accuracy,
    agents: agentResults(runs, spikeMultiple),
    // The turns view numbers rounds for every workflow (a refine solver's revision is round 1);
    // only a debate's critic rounds are critic rounds.
    critic: config.workflow.kind === "debate" && config.workflow.critics > 0
      ? criticResults(runs)
      : [],
    tokensPerQuestion: cost?.tokensPerQuestion ?? null,
    turnsPerTrajectory: cost?.turnsPerTrajectory ?? null,
    trainableParameters: cost?.trainableParameters ?? null,
    seconds: sampleStat(runs.map((r) => r.seconds)),
    start: cellStart(cell.id, starts.plan, starts.runs, benchmarks),
    benchmarks,
    follows: cellFollows(cell),
    config: recorded,
  };
}

/**
 * The agents a claim is tested for: `[null]` for a metric measured once per run; else the claim's
 * own agent, or every agent of the cells (sorted).
 */
export function claimAgents(
  claim: Pick<Claim, "metric" | "agent">,
  cells: readonly Pick<CellResult, "agents">[],
): (string | null)[] {
  if (!AGENT_METRICS.includes(claim.metric)) return [null];
  if (claim.agent !== undefined) return [claim.agent];
  return [...new Set(cells.flatMap((c) => c.agents.map((a) => a.agent)))].sort();
}

/** The per-run values a claim tests in `cell` (for agent metrics, of `agent`). */
export function claimSamples(
  cell: CellResult,
  metric: ClaimMetric,
  agent: string | null,
): SampleStat {
  const a = cell.agents.find((x) => x.agent === agent);
  switch (metric) {
    case "avg@k":
      return cell.accuracy.avg;
    case "pass@k":
      return cell.accuracy.pass;
    case "critic-improvement":
      return cell.critic.at(-1)?.improvement ?? sampleStat([]);
    case "grad-norm-max-over-median":
      return a?.maxOverMedian ?? sampleStat([]);
    case "grad-norm-spikes":
      return a?.spikesPerRun ?? sampleStat([]);
    case "lemma-multiplier":
      return a?.multiplier ?? sampleStat([]);
  }
}

/**
 * The power of a claim's test at `design.seeds` and the cells' own evaluation sizes, from the
 * per-seed values it tested.
 *
 * @example
 * ```ts
 * declare const claim: ClaimResult;
 * declare const cells: ReadonlyMap<string, CellResult>;
 * powerOfClaim(claim, cells, { relative: 0.056 }, { seeds: 5, alpha: 0.05, power: 0.8 }).mde;
 * ```
 */
export function powerOfClaim(
  claim:
    & Pick<ClaimResult, "cell" | "against" | "metric" | "expect" | "value" | "reference">
    & { readonly pairing?: Pairing | null },
  cells: ReadonlyMap<string, Pick<CellResult, "problems" | "k">>,
  paperEffect: PaperEffect | null,
  design: { readonly seeds: number; readonly alpha: number; readonly power: number },
): ClaimPower {
  const side = (id: string, stat: SampleStat | null) => {
    const c = cells.get(id);
    const size: EvaluationSize = { problems: c?.problems ?? null, samples: c?.k ?? 1 };
    const values = stat?.samples ?? [];
    return { cell: id, values, seeds: stat?.seeds ?? null, observed: size, planned: size };
  };
  return claimPower({
    metric: claim.metric,
    expect: claim.expect,
    paperEffect,
    cell: side(claim.cell, claim.value),
    reference: claim.against === null ? null : side(claim.against, claim.reference),
    paired: claim.pairing?.paired ?? false,
    ...design,
  });
}

/** A claim's tests and verdict (the verdict before any run is known to be pending). */
export type ClaimTests = Pick<ClaimResult, "test" | "pairing" | "paired" | "decidedBy" | "verdict">;

/**
 * Tests one claim: a one-sample test against 1 without a reference; else Welch's test, the pairing
 * of the two cells' runs by seed and, where the design is paired, the paired test on the seeds
 * both ran, which then gives the verdict (Welch's where it is undefined: every difference 0).
 *
 * @example
 * ```ts
 * import type { CellResult } from "./study-results.ts";
 * declare const a: CellResult;
 * declare const b: CellResult;
 * const side = (cell: CellResult) => ({
 *   cell,
 *   values: cell.accuracy.avg.samples,
 *   seeds: cell.runs.map((r) => r.seed),
 * });
 * const t = testClaim({ metric: "avg@k", expect: "higher" }, side(a), side(b), 0.05);
 * [t.test?.p, t.paired?.p, t.paired?.correlation, t.decidedBy, t.verdict];
 * ```
 */
export function testClaim(
  claim: Pick<ClaimIdentity, "metric" | "expect">,
  cell: PairSide,
  reference: PairSide | null,
  alpha: number,
): ClaimTests {
  if (reference === null) {
    const test = oneSampleTest(cell.values, 1);
    const verdict = verdictOf(claim.expect, test, alpha);
    return { test, pairing: null, paired: null, decidedBy: "one-sample", verdict };
  }
  const test = welchTest(cell.values, reference.values);
  const pairing = pairingOf(claim.metric, cell, reference);
  const paired = pairing.paired
    ? pairedTest(valuesAt(cell, pairing.seeds), valuesAt(reference, pairing.seeds))
    : null;
  const decidedBy = verdictTest(pairing.paired, paired);
  const verdict = verdictOf(claim.expect, decidedBy === "paired" ? paired : test, alpha);
  return { test, pairing, paired, decidedBy, verdict };
}

/** `stat` with the seed of each of its samples in `cell`, where they can be told. */
function seeded(
  cell: CellResult | undefined,
  stat: SampleStat,
  claim: Pick<ClaimIdentity, "metric" | "agent">,
  spikeMultiple: number,
): SampleStat {
  if (stat.seeds !== undefined || cell === undefined) return stat;
  return withSeeds(stat, sampleSeeds(cell, claim.metric, claim.agent, stat.samples, spikeMultiple));
}

/**
 * A claim read from a study.json written before claims were paired, with its tests computed anew
 * from its per-run values: the seed of each value (from its cell's runs), the pairing, the paired
 * test, and the verdict by the current rule (a pending claim stays pending).
 *
 * @example
 * ```ts
 * declare const results: StudyResults;
 * const cells = new Map(results.cells.map((c) => [c.id, c]));
 * const claim = results.comparisons[0].claims[0];
 * withClaimTests(claim, cells, results.alpha, results.spikeMultiple).paired?.p;
 * ```
 */
export function withClaimTests(
  claim: ClaimResult,
  cells: ReadonlyMap<string, CellResult>,
  alpha: number,
  spikeMultiple: number,
): ClaimResult {
  const side = (id: string, stat: SampleStat): PairSide => {
    const cell = cells.get(id);
    const s = seeded(cell, stat, claim, spikeMultiple);
    const fallback = { id, runs: [], problems: null, setup: { tasks: "", evaluation: "" } };
    return { cell: cell ?? fallback, values: s.samples, seeds: s.seeds ?? null };
  };
  const value = claim.value && seeded(cells.get(claim.cell), claim.value, claim, spikeMultiple);
  const reference = claim.reference && claim.against !== null
    ? seeded(cells.get(claim.against), claim.reference, claim, spikeMultiple)
    : null;
  const tests = testClaim(
    claim,
    side(claim.cell, value ?? sampleStat([])),
    claim.against === null ? null : side(claim.against, reference ?? sampleStat([])),
    alpha,
  );
  return {
    ...claim,
    value,
    reference,
    ...tests,
    verdict: claim.verdict === "pending" ? "pending" : tests.verdict,
  };
}

function claimResults(
  claim: Claim,
  comparison: Comparison,
  cells: ReadonlyMap<string, CellResult>,
  grid: Pick<Grid, "alpha" | "power" | "spike_multiple">,
  seeds: number,
): ClaimResult[] {
  const alpha = grid.alpha;
  const cell = cells.get(claim.cell)!;
  const oneCell = ONE_CELL_EXPECTATIONS.includes(claim.expect);
  const against = oneCell ? null : cells.get(claim.against ?? comparison.baseline)!;
  const agents = claimAgents(claim, [cell, ...(against ? [against] : [])]);
  const pending = cell.runs.length === 0 || (against !== null && against.runs.length === 0);
  return agents.map((agent) => {
    const stat = (c: CellResult) =>
      seeded(c, claimSamples(c, claim.metric, agent), { ...claim, agent }, grid.spike_multiple);
    const side = (c: CellResult, s: SampleStat): PairSide => ({
      cell: c,
      values: s.samples,
      seeds: s.seeds ?? null,
    });
    const value = stat(cell);
    const reference = against ? stat(against) : null;
    const tests = testClaim(
      claim,
      side(cell, value),
      against && reference ? side(against, reference) : null,
      alpha,
    );
    return {
      cell: cell.id,
      against: against?.id ?? null,
      agent,
      metric: claim.metric,
      expect: claim.expect,
      paper: claim.paper,
      value,
      reference,
      ...tests,
      sameBenchmark: against ? sameBenchmark(cell.benchmarks, against.benchmarks) : null,
      verdict: pending ? "pending" : tests.verdict,
      power: powerOfClaim(
        {
          ...claim,
          cell: cell.id,
          against: against?.id ?? null,
          value,
          reference,
          pairing: tests.pairing,
        },
        cells,
        claim.paper_effect ?? null,
        { seeds, alpha, power: grid.power },
      ),
    };
  });
}

function replayResult(
  cell: CellResult,
  records: readonly ReplayRecord[],
  heads: ReadonlyMap<string, StreamHead>,
): ReplayResult {
  const ids = new Set(cell.runs.map((r) => r.runId));
  const mine = records.filter((r) => r.cell === cell.id);
  const current = mine.find((r) => {
    const head = heads.get(r.runId);
    return ids.has(r.runId) && head?.version === r.version && head.hash === r.headHash;
  });
  if (current) {
    return {
      cell: cell.id,
      status: current.error !== null ? "error" : current.ok ? "identical" : "diverged",
      record: current,
    };
  }
  return { cell: cell.id, status: mine.length > 0 ? "stale" : "not checked", record: null };
}

function distinctText(runs: readonly StudyRun[], f: (r: StudyRun) => unknown): string[] {
  return [...new Set(runs.map((r) => String(f(r))))].sort();
}

/**
 * Computes the study's results.
 *
 * @example
 * ```ts
 * import { readHardware } from "./hardware.ts";
 * // the grid, its plan, the runs and stream heads read from the store, the replay records:
 * declare const read: Omit<ResultInputs, "hardware" | "store" | "seeds">;
 * const hardware = await readHardware();
 * const results = studyResults({ ...read, hardware, store: ".polyrl/study.sqlite", seeds: 5 });
 * results.comparisons[0].claims.map((c) => c.verdict);
 * ```
 */
export function studyResults(inputs: ResultInputs): StudyResults {
  const { grid, plan, runs } = inputs;
  const summaries = (pick: (r: StudyRun) => RunSummary) =>
    runs.map((r) => labelled(pick(r), r.cell));
  const report = (pick: (r: StudyRun) => RunSummary, metric: "avg@k" | "pass@k") =>
    runs.length === 0 ? null : buildReport(summaries(pick), {
      groupBy: CELL_KEY,
      spikeMultiple: grid.spike_multiple,
      metric,
    });
  const reports = { avg: report((r) => r.avg, "avg@k"), pass: report((r) => r.pass, "pass@k") };
  const cells = new Map(grid.cells.map((cell) => [
    cell.id,
    cellResult(
      cell,
      plan.filter((p) => p.cell.id === cell.id),
      runs.filter((r) => r.cell === cell.id),
      reports,
      grid.spike_multiple,
      { plan: inputs.starts ?? [], runs: inputs.startRuns ?? [] },
    ),
  ]));
  const comparisons = grid.comparisons.map((c): ComparisonResult => ({
    id: c.id,
    title: c.title,
    note: c.note ?? null,
    baseline: c.baseline,
    cells: c.cells,
    charts: c.charts,
    claims: c.claims.flatMap((claim) => claimResults(claim, c, cells, grid, inputs.seeds)),
  }));
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
  const startRuns = inputs.startRuns ?? [];
  const timed = [...startRuns, ...runs];
  const starts = timed.map((r) => r.startedMs);
  const ends = timed.map((r) => r.endedMs);
  const replays = [...cells.values()].map((c) => replayResult(c, inputs.replays, inputs.heads));
  return {
    kind: "study-results",
    title: grid.title,
    gridFile: relative(Deno.cwd(), grid.file),
    store: inputs.store,
    seeds: inputs.seeds,
    stepsOverride: inputs.steps ?? null,
    alpha: grid.alpha,
    power: grid.power,
    spikeMultiple: grid.spike_multiple,
    cells: [...cells.values()],
    comparisons,
    replays,
    time: {
      runs: runs.length,
      summedSeconds: runs.reduce((s, r) => s + r.seconds, 0),
      startRuns: startRuns.length,
      startSeconds: startRuns.reduce((s, r) => s + r.seconds, 0),
      spanSeconds: timed.length ? (Math.max(...ends) - Math.min(...starts)) / 1000 : 0,
      busySeconds: unionSeconds(timed),
      firstStart: timed.length ? iso(Math.min(...starts)) : null,
      lastEnd: timed.length ? iso(Math.max(...ends)) : null,
      replaySeconds: replays.reduce((s, r) => s + (r.record?.seconds ?? 0), 0),
    },
    software: {
      deno: distinctText(runs, (r) => r.runtime.deno),
      onnxruntime: distinctText(runs, (r) => r.runtime.onnxruntime),
      executionProvider: distinctText(runs, (r) => r.runtime.executionProvider),
      threads: distinctText(runs, (r) => r.runtime.threads),
      platform: distinctText(runs, (r) => `${r.runtime.os}/${r.runtime.arch}`),
      codeVersion: distinctText(runs, (r) => r.codeVersion),
    },
    hardware: inputs.hardware,
    previous: null,
  };
}
