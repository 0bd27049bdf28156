/**
 * Whether a two-cell claim's design is paired, and its pairs. The runs of one seed in two cells
 * share what the seed decides: the training problems and their order and every keyed random
 * stream, so their per-run values are correlated and the paired t-test on the per-seed differences
 * removes what they share. For gradient-norm and multiplier metrics the seed is the whole design.
 * Accuracy and the critic rate also depend on the problems evaluated: the runs of a seed must have
 * been evaluated on the same problems, as the SHA-256 of each benchmark that `run.started`
 * records shows (`benchmarks` on a cell's runs). Results without those hashes (v1 and v2 study.json
 * files) pair on the cells' tasks instead: the same generated tasks give a seed's runs the same
 * problems (v1 and v2 drew each seed's validation problems from the seed, the same in every cell).
 * Seeds only one cell has a value for are left out of the pairs and named.
 */
import { agentStability } from "./agent-stability.ts";
import { shortHash } from "./cell-benchmarks.ts";
import type { ClaimMetric } from "./grid-schema.ts";
import type { SampleStat } from "./sample-stat.ts";
import type { RunBenchmark } from "./study-data.ts";
import type { CellResult } from "./study-results.ts";

/** What makes the runs of one seed in two cells a pair. */
export type PairingBasis =
  /** Gradient norms and multipliers: the seed decides the training problems and random streams. */
  | "seed"
  /** Accuracy: the runs of each seed were evaluated on problems of equal SHA-256. */
  | "benchmark-sha256"
  /** Accuracy without recorded hashes: the same tasks draw the same problems for a seed. */
  | "same-tasks";

/** How a two-cell claim's runs pair. */
export interface Pairing {
  /** The design is paired: the paired test is reported, and gives the verdict where defined. */
  readonly paired: boolean;
  /** Why the runs of a seed pair; null when they do not. */
  readonly basis: PairingBasis | null;
  /** Why the design is not paired; null when it is. */
  readonly reason: string | null;
  /** The seeds both cells have a value for, ascending: the pairs. */
  readonly seeds: readonly number[];
  /** Seeds only one cell has a value for (a run pending, failed or without the value): left out. */
  readonly unmatched: readonly { readonly cell: string; readonly seeds: readonly number[] }[];
}

/** What pairing needs of a cell: its runs' seeds and benchmark hashes, and its tasks. */
export type PairableCell = Pick<CellResult, "id" | "runs" | "problems"> & {
  readonly setup: Pick<CellResult["setup"], "tasks" | "evaluation">;
};

/** One side of a claim: the cell and its per-run values, with the seed of each (null: unknown). */
export interface PairSide {
  readonly cell: PairableCell;
  readonly values: readonly number[];
  readonly seeds: readonly number[] | null;
}

/** Metrics measured on evaluated problems: their runs pair only on the same problems. */
const EVALUATED: readonly ClaimMetric[] = ["avg@k", "pass@k", "critic-improvement"];

/**
 * The seed of each of a claim's per-run values in `cell` (`samples`, as `claimSamples` gives
 * them, in run order); null when they cannot be told (values left out for reasons not recorded).
 * Accuracy and the critic rate have one value per run; a gradient-norm figure is left out for a
 * run without an informative step and a multiplier for a run without a finite one, decided here as
 * the cell's summary decides it (agent-stability.ts, `spikeMultiple`).
 *
 * @example
 * ```ts
 * import type { CellResult } from "./study-results.ts";
 * declare const cell: CellResult;
 * sampleSeeds(cell, "avg@k", null, cell.accuracy.avg.samples, 10); // [0, 1, 2, 3]
 * ```
 */
export function sampleSeeds(
  cell: Pick<CellResult, "runs" | "agents">,
  metric: ClaimMetric,
  agent: string | null,
  samples: readonly number[],
  spikeMultiple: number,
): number[] | null {
  if (EVALUATED.includes(metric)) {
    return samples.length === cell.runs.length ? cell.runs.map((r) => r.seed) : null;
  }
  const a = cell.agents.find((x) => x.agent === agent);
  if (a === undefined) return samples.length === 0 ? [] : null;
  const series = metric === "lemma-multiplier" ? a.multipliers : a.gradNorms;
  if (series.length === samples.length) return series.map((s) => s.seed);
  // JSON has no NaN: a study.json holds a non-finite step as null.
  const finite = series.filter((s) => {
    const values = s.values.map((v) => v ?? NaN);
    if (metric === "lemma-multiplier") return values.some(Number.isFinite);
    const st = agentStability(a.agent, values, spikeMultiple);
    return Number.isFinite(metric === "grad-norm-max-over-median" ? st.maxOverMedian : st.median);
  });
  return finite.length === samples.length ? finite.map((s) => s.seed) : null;
}

/** `stat` with the seed of each sample, when known. */
export function withSeeds(stat: SampleStat, seeds: readonly number[] | null): SampleStat {
  return seeds === null ? stat : { ...stat, seeds };
}

function distinct(seeds: readonly number[]): boolean {
  return new Set(seeds).size === seeds.length;
}

function runOf(cell: PairableCell, seed: number) {
  return cell.runs.find((r) => r.seed === seed);
}

/** The benchmarks a cell evaluates ("validation, test"), from its evaluation setup. */
function evaluatedBenchmarks(cell: PairableCell): string {
  return cell.setup.evaluation.split(" × ")[0];
}

type Benchmarks = Readonly<Record<string, RunBenchmark>>;

function hashesText(hashes: Benchmarks): string {
  return Object.entries(hashes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, b]) => `${name} ${shortHash(b.sha256)}…`).join(", ");
}

function sameHashes(a: Benchmarks, b: Benchmarks): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k].sha256 === b[k]?.sha256);
}

/**
 * On what the runs of the common seeds were evaluated on the same problems (their hashes, or the
 * same tasks where none were recorded), or why they were not.
 */
function evaluationBasis(
  a: PairableCell,
  b: PairableCell,
  seeds: readonly number[],
): { basis: PairingBasis } | { reason: string } {
  const hashes = seeds.map((s) => [runOf(a, s)?.benchmarks, runOf(b, s)?.benchmarks] as const);
  const recorded = (x: Benchmarks | undefined): x is Benchmarks =>
    x !== undefined && Object.keys(x).length > 0;
  if (hashes.every(([x, y]) => recorded(x) && recorded(y))) {
    for (const [i, [x, y]] of hashes.entries()) {
      if (!sameHashes(x!, y!)) {
        return {
          reason: `seed ${seeds[i]} was evaluated on other problems in ${a.id} ` +
            `(${hashesText(x!)}) than in ${b.id} (${hashesText(y!)})`,
        };
      }
    }
    return { basis: "benchmark-sha256" };
  }
  if (
    a.setup.tasks === b.setup.tasks && evaluatedBenchmarks(a) === evaluatedBenchmarks(b) &&
    a.problems === b.problems
  ) {
    return { basis: "same-tasks" };
  }
  return {
    reason: `the runs did not record their benchmarks' SHA-256 and the cells' tasks or ` +
      `evaluations differ, so a seed's problems may differ between ${a.id} and ${b.id}`,
  };
}

/**
 * How the per-run values of `a` and `b` pair for `metric`: on the seeds both have a value for, when
 * at least 2, each seed once, and (for accuracy and the critic rate) each seed's runs evaluated on
 * the same problems.
 *
 * @example
 * ```ts
 * import type { CellResult } from "./study-results.ts";
 * declare const drmas: CellResult;
 * declare const grpo: CellResult;
 * const side = (cell: CellResult) => ({
 *   cell,
 *   values: cell.accuracy.avg.samples,
 *   seeds: cell.runs.map((r) => r.seed),
 * });
 * pairingOf("avg@k", side(drmas), side(grpo)).seeds; // [0, 1, 2, 3]
 * ```
 */
export function pairingOf(metric: ClaimMetric, a: PairSide, b: PairSide): Pairing {
  const none = (reason: string, seeds: readonly number[] = []): Pairing => ({
    paired: false,
    basis: null,
    reason,
    seeds,
    unmatched: [],
  });
  if (a.seeds === null || b.seeds === null) {
    const which = a.seeds === null ? a.cell.id : b.cell.id;
    return none(`the per-run values of ${which} cannot be matched to their seeds`);
  }
  if (!distinct(a.seeds) || !distinct(b.seeds)) {
    return none(`a seed has more than one run in ${distinct(a.seeds) ? b.cell.id : a.cell.id}`);
  }
  const inB = new Set(b.seeds);
  const seeds = a.seeds.filter((s) => inB.has(s)).sort((x, y) => x - y);
  const common = new Set(seeds);
  const unmatched = [a, b].flatMap((side) => {
    const only = side.seeds!.filter((s) => !common.has(s)).sort((x, y) => x - y);
    return only.length === 0 ? [] : [{ cell: side.cell.id, seeds: only }];
  });
  if (seeds.length < 2) {
    return {
      ...none(`${seeds.length} seed(s) in common; a paired test needs 2`, seeds),
      unmatched,
    };
  }
  const basis = EVALUATED.includes(metric)
    ? evaluationBasis(a.cell, b.cell, seeds)
    : { basis: "seed" as const };
  if ("reason" in basis) return { ...none(basis.reason, seeds), unmatched };
  return { paired: true, basis: basis.basis, reason: null, seeds, unmatched };
}

/** The values of `side` at `seeds`, in that order. */
export function valuesAt(side: Omit<PairSide, "cell">, seeds: readonly number[]): number[] {
  const bySeed = new Map(side.seeds!.map((s, i) => [s, side.values[i]]));
  return seeds.map((s) => bySeed.get(s)!);
}
