/**
 * The power of a claim's test, stated before its result: from per-seed values (of this study or
 * of an earlier one), the smallest difference the planned grid detects with the grid's power at
 * its α (two-sided Welch test for two cells, one-sample t-test against 1 for one), the power at
 * the paper's effect, and the seeds per cell that effect needs. Exact power from the noncentral t
 * (analysis/stats/t-test-power.ts).
 *
 * Paired design. Where the two cells' runs pair by seed (study/pairing.ts), the paired t-test is
 * planned too: it is the one-sample t-test of the per-seed differences (noncentral t with n - 1
 * degrees of freedom, noncentrality δ / (sd_d / √n)), sd_d the standard deviation of the earlier
 * runs' per-seed differences over the seeds both cells ran. Its detectable difference, power at
 * the paper's effect and seeds needed stand beside Welch's. A resized evaluation rescales sd_d as
 * it rescales each side's spread, the correlation r of the two cells' per-seed values held:
 * sd_d' = sd_d · h(s₁', s₂') / h(s₁, s₂), h(x, y) = √(x² + y² − 2rxy).
 *
 * Validation size. A run's avg@k is the mean over P validation problems, drawn afresh from its
 * seed, of each problem's share of correct samples among k. Its variance over seeds is
 * σ²_train + v/P, where σ²_train is what training itself varies (held fixed: it does not shrink
 * with P) and v the per-problem variance: for avg@k, v = Var(p_i) + E[p_i(1 - p_i)]/k, which lies
 * between m(1 - m)/k (every problem equally hard) and m(1 - m) (every problem all or nothing),
 * m the cell's mean; for pass@k, v = m(1 - m) exactly (a problem is passed or not). The earlier
 * runs' variance s² is split at their P and k (the problem term capped at s²), and the problem
 * term rescaled to the planned P and k: a range, whose conservative end (the least problem noise,
 * the most training noise) is the `mde` and whose other end is `mdeLow`. Other metrics are taken
 * at their observed spread; the number of training steps is not modelled.
 */
import {
  oneSampleMde,
  oneSamplePower,
  oneSampleSeeds,
  pairedFromSamples,
  welchMde,
} from "../analysis/mod.ts";
import { welchPower, welchSeeds } from "../analysis/mod.ts";
import type { ClaimMetric, Expectation, PaperEffect } from "./grid-schema.ts";

/** The evaluation behind a cell's accuracy: problems per run (null: unknown) and samples each. */
export interface EvaluationSize {
  readonly problems: number | null;
  readonly samples: number;
}

/** One side of a claim: the earlier runs' values and evaluation, and the planned evaluation. */
export interface PowerSide {
  readonly cell: string;
  readonly values: readonly number[];
  /** The seed of each value; null or absent where unknown (no paired power then). */
  readonly seeds?: readonly number[] | null;
  readonly observed: EvaluationSize;
  readonly planned: EvaluationSize;
}

/** What the power of one claim is computed from. */
export interface PowerInput {
  readonly metric: ClaimMetric;
  readonly expect: Expectation;
  readonly paperEffect: PaperEffect | null;
  readonly cell: PowerSide;
  /** The compared cell; null for a one-cell claim (tested against 1). */
  readonly reference: PowerSide | null;
  /** Planned seeds per cell. */
  readonly seeds: number;
  readonly alpha: number;
  readonly power: number;
  /**
   * The design is paired (study/pairing.ts): the planned test is also the paired t-test on the
   * per-seed differences, whose spread is taken from the values of the seeds both sides ran.
   */
  readonly paired?: boolean;
}

/** The planned per-seed standard deviation of one side (a range when the evaluation is resized). */
export interface SideSpread {
  readonly cell: string;
  readonly n: number;
  /** Standard deviation of the earlier runs' values. */
  readonly observedSd: number;
  /** Planned standard deviation, conservative end. */
  readonly sd: number;
  /** Planned standard deviation, if problem noise is as large as the earlier runs allow. */
  readonly sdLow: number;
  readonly observed: EvaluationSize;
  readonly planned: EvaluationSize;
}

/** The power of the paired t-test of a claim, from the earlier runs' per-seed differences. */
export interface PairedPower {
  /** Seeds both cells ran in the earlier runs: the differences the spread is taken from. */
  readonly pairs: number;
  /** Pearson's r of the two cells' per-seed values; null when either has no spread. */
  readonly correlation: number | null;
  /** Standard deviation of the earlier per-seed differences (null: fewer than 2 pairs). */
  readonly observedSd: number | null;
  /** Planned standard deviation of the differences, conservative end. */
  readonly sd: number | null;
  /** The same at the other end of the resized evaluation's range; `sd` when nothing is resized. */
  readonly sdLow: number | null;
  /** Minimum detectable |difference| of the paired test at the planned seeds (conservative). */
  readonly mde: number | null;
  readonly mdeLow: number | null;
  /** Power of the paired test at the paper's effect (conservative spread). */
  readonly powerAtPaper: number | null;
  /** Seeds (pairs) that detect the paper's effect with the paired test; null: none or too many. */
  readonly seedsNeeded: number | null;
  /** Why a figure is missing, or what to know when reading it; null when nothing. */
  readonly note: string | null;
}

/** The power analysis of one claim. */
export interface ClaimPower {
  readonly seeds: number;
  readonly alpha: number;
  readonly power: number;
  readonly spread: readonly SideSpread[];
  /** Minimum detectable |difference| at the planned seeds and evaluation (conservative). */
  readonly mde: number | null;
  /** The same with the smallest planned spread; equals `mde` when nothing is resized. */
  readonly mdeLow: number | null;
  /** The paper's effect in the metric's units (relative effects times the reference mean). */
  readonly paperEffect: number | null;
  /** Power of the planned test at the paper's effect (conservative spread). */
  readonly powerAtPaper: number | null;
  /** Seeds per cell that detect the paper's effect with `power`; null: none, or beyond `SEED_CAP`. */
  readonly seedsNeeded: number | null;
  /** Why a figure is missing, or what to know when reading it; null when nothing. */
  readonly note: string | null;
  /**
   * The paired test's power where the design is paired; null for one-cell claims, unpaired
   * designs and earlier values without seeds (absent in study.json files written before).
   */
  readonly paired?: PairedPower | null;
}

/** Seeds-needed searches stop here: beyond it the answer is "not with this design". */
export const SEED_CAP = 10_000;

const ACCURACY: readonly ClaimMetric[] = ["avg@k", "pass@k"];
const RATES: readonly ClaimMetric[] = [...ACCURACY, "critic-improvement"];

function meanOf(xs: readonly number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

function varianceOf(xs: readonly number[]): number {
  const m = meanOf(xs);
  return xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1);
}

/** The per-problem variance v of the metric's mean over problems: [least, most]. */
function perProblemVariance(metric: ClaimMetric, m: number, k: number): [number, number] {
  const q = m * (1 - m);
  return metric === "pass@k" ? [q, q] : [q / k, q];
}

function sameSize(a: EvaluationSize, b: EvaluationSize): boolean {
  return a.problems === b.problems && a.samples === b.samples;
}

/** A side's planned spread; a string says why the evaluation cannot be rescaled. */
function sideSpread(metric: ClaimMetric, side: PowerSide): SideSpread | string {
  const s2 = varianceOf(side.values);
  const base = {
    cell: side.cell,
    n: side.values.length,
    observedSd: Math.sqrt(s2),
    observed: side.observed,
    planned: side.planned,
  };
  if (!ACCURACY.includes(metric) || sameSize(side.observed, side.planned)) {
    return { ...base, sd: Math.sqrt(s2), sdLow: Math.sqrt(s2) };
  }
  const p0 = side.observed.problems;
  const p1 = side.planned.problems;
  if (p0 === null || p1 === null) {
    return `${side.cell}: the number of evaluated problems is not known, so the planned ` +
      `evaluation cannot be rescaled`;
  }
  if (metric === "pass@k" && side.observed.samples !== side.planned.samples) {
    return `${side.cell}: pass@k at a different k is another quantity; keep k to rescale it`;
  }
  const m = meanOf(side.values);
  const planned = (v0: number, v1: number) => {
    // The earlier problem term, capped at the observed variance; what is left is training's.
    const problems0 = Math.min(v0 / p0, s2);
    const scale = v0 === 0 ? 0 : problems0 / (v0 / p0);
    return Math.sqrt(s2 - problems0 + scale * (v1 / p1));
  };
  const [least0, most0] = perProblemVariance(metric, m, side.observed.samples);
  const [least1, most1] = perProblemVariance(metric, m, side.planned.samples);
  const a = planned(least0, least1);
  const b = planned(most0, most1);
  return { ...base, sd: Math.max(a, b), sdLow: Math.min(a, b) };
}

/** The paper's effect in the metric's units, or null. */
function paperEffectValue(input: PowerInput): number | null {
  const e = input.paperEffect;
  if (e === null) return null;
  if ("difference" in e) return e.difference;
  const base = input.reference === null ? 1 : meanOf(input.reference.values);
  return e.relative * base;
}

function empty(input: PowerInput, note: string, spread: readonly SideSpread[] = []): ClaimPower {
  return {
    seeds: input.seeds,
    alpha: input.alpha,
    power: input.power,
    spread,
    mde: null,
    mdeLow: null,
    paperEffect: paperEffectValue(input),
    powerAtPaper: null,
    seedsNeeded: null,
    note,
    paired: pairedNothing(input, null),
  };
}

/** The paired power of a paired design whose figures cannot be computed (null when unpaired). */
function pairedNothing(input: PowerInput, note: string | null): PairedPower | null {
  const [x, y] = [input.cell, input.reference];
  if (input.paired !== true || y === null || !x.seeds || !y.seeds) return null;
  const common = x.seeds.filter((s) => y.seeds!.includes(s)).length;
  return {
    pairs: common,
    correlation: null,
    observedSd: null,
    sd: null,
    sdLow: null,
    mde: null,
    mdeLow: null,
    powerAtPaper: null,
    seedsNeeded: null,
    note,
  };
}

/** The standard deviation of a two-cell difference at side spreads x, y and correlation r. */
function differenceSd(x: number, y: number, r: number): number {
  return Math.sqrt(Math.max(0, x * x + y * y - 2 * r * x * y));
}

/** The paired test's power from the values of the seeds both sides ran; null when not paired. */
function pairedPower(
  input: PowerInput,
  a: SideSpread,
  b: SideSpread,
  effect: number | null,
): PairedPower | null {
  const [x, y] = [input.cell, input.reference];
  if (input.paired !== true || y === null || !x.seeds || !y.seeds) return null;
  const ys = new Map(y.seeds.map((s, i) => [s, y.values[i]]));
  const seeds = x.seeds.filter((s) => ys.has(s));
  const nothing = (note: string, more: Partial<PairedPower> = {}): PairedPower => ({
    ...pairedNothing(input, note)!,
    ...more,
  });
  if (seeds.length < 2) {
    return nothing(`${seeds.length} seed(s) ran in both cells; a paired spread needs 2`);
  }
  const xv = seeds.map((s) => x.values[x.seeds!.indexOf(s)]);
  const t = pairedFromSamples(xv, seeds.map((s) => ys.get(s)!));
  const observedSd = t.se * Math.sqrt(t.n);
  const r = t.correlation ?? 0;
  const resized = [a, b].some((s) => s.sd !== s.observedSd || s.sdLow !== s.observedSd);
  const h0 = differenceSd(a.observedSd, b.observedSd, r);
  const planned = (pick: (s: SideSpread) => number) => {
    if (!resized) return observedSd;
    const h1 = differenceSd(pick(a), pick(b), r);
    return h0 === 0 ? h1 : observedSd * (h1 / h0);
  };
  const [sdA, sdB] = [planned((s) => s.sd), planned((s) => s.sdLow)];
  const [sd, sdLow] = [Math.max(sdA, sdB), Math.min(sdA, sdB)];
  const known = { correlation: t.correlation, observedSd, sd, sdLow };
  if (sd === 0) {
    return nothing(
      "every seed gave the same difference, so the power of the paired test is undefined",
      known,
    );
  }
  const { seeds: n, alpha, power } = input;
  const size = Math.abs(effect ?? NaN);
  const seedsNeeded = effect === null ? null : oneSampleSeeds(size, sd, alpha, power, SEED_CAP);
  const notes = [
    ...(seeds.length < Math.max(x.values.length, y.values.length)
      ? [`differences over the ${seeds.length} seeds both cells ran`]
      : []),
    ...(resized ? [`the correlation held at the earlier runs' r = ${r.toFixed(2)}`] : []),
    ...(effect !== null && seedsNeeded === null
      ? [`the paper's effect needs more than ${SEED_CAP} seeds`]
      : []),
  ];
  return {
    pairs: seeds.length,
    ...known,
    mde: oneSampleMde(sd, n, alpha, power),
    mdeLow: sdLow === 0 ? 0 : oneSampleMde(sdLow, n, alpha, power),
    powerAtPaper: effect === null ? null : oneSamplePower(size / sd, n, alpha),
    seedsNeeded,
    note: notes.length ? notes.join("; ") : null,
  };
}

/**
 * The power analysis of one claim.
 *
 * @example
 * ```ts
 * const observed = { problems: 16, samples: 16 };
 * const p = claimPower({
 *   metric: "avg@k", expect: "higher", paperEffect: { relative: 0.056 },
 *   cell: { cell: "a", values: [0.25, 0.27, 0.3, 0.24, 0.28], observed, planned: observed },
 *   reference: { cell: "b", values: [0.22, 0.27, 0.25, 0.28, 0.3], observed, planned: observed },
 *   seeds: 5, alpha: 0.05, power: 0.8,
 * });
 * console.log(p.mde, p.seedsNeeded);
 * ```
 */
export function claimPower(input: PowerInput): ClaimPower {
  const sides = [input.cell, ...(input.reference ? [input.reference] : [])];
  const short = sides.find((s) => s.values.length < 2);
  if (short) {
    return empty(
      input,
      `${short.cell} has ${short.values.length} run(s) to take a spread from; a spread needs 2`,
    );
  }
  if (input.seeds < 2) return empty(input, "a t-test needs 2 seeds per cell");
  const spreads = sides.map((s) => sideSpread(input.metric, s));
  const reason = spreads.find((s): s is string => typeof s === "string");
  if (reason !== undefined) return empty(input, reason);
  const spread = spreads as SideSpread[];
  if (spread.every((s) => s.sd === 0)) {
    return empty(
      input,
      "no spread: every run gave the same value, so the power of a t-test is undefined",
      spread,
    );
  }
  const { seeds: n, alpha, power } = input;
  const [a, b] = spread;
  const mdeAt = (pick: (s: SideSpread) => number) =>
    b === undefined
      ? oneSampleMde(pick(a), n, alpha, power)
      : welchMde({ sd1: pick(a), n1: n, sd2: pick(b), n2: n }, alpha, power);
  const effect = paperEffectValue(input);
  const seedsNeeded = effect === null
    ? null
    : b === undefined
    ? oneSampleSeeds(Math.abs(effect), a.sd, alpha, power, SEED_CAP)
    : welchSeeds(Math.abs(effect), a.sd, b.sd, alpha, power, SEED_CAP);
  const powerAtPaper = effect === null
    ? null
    : b === undefined
    ? oneSamplePower(Math.abs(effect) / a.sd, n, alpha)
    : welchPower(effect, { sd1: a.sd, n1: n, sd2: b.sd, n2: n }, alpha);
  const referenceMean = input.reference === null ? null : meanOf(input.reference.values);
  const pastBounds = effect !== null && referenceMean !== null && RATES.includes(input.metric) &&
    (referenceMean + effect > 1 || referenceMean + effect < 0);
  const notes = [
    ...(pastBounds
      ? [
        `the paper's effect would take ${input.reference!.cell} (${
          (100 * referenceMean!).toFixed(2)
        }%) past the bounds of a rate: a ceiling or floor, not a power question`,
      ]
      : []),
    ...(effect !== null && seedsNeeded === null
      ? [`the paper's effect needs more than ${SEED_CAP} seeds per cell at this spread`]
      : []),
    ...(input.expect === "not-lower"
      ? ["a not-lower verdict rules out only drops larger than the detectable difference"]
      : []),
  ];
  return {
    seeds: n,
    alpha,
    power,
    spread,
    mde: mdeAt((s) => s.sd),
    mdeLow: mdeAt((s) => s.sdLow),
    paperEffect: effect,
    powerAtPaper,
    seedsNeeded,
    note: notes.length ? notes.join("; ") : null,
    paired: b === undefined ? null : pairedPower(input, a, b, effect),
  };
}
