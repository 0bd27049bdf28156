/**
 * Per-benchmark results over seeds: mean and standard error of the mean (unbiased variance,
 * sqrt(s^2 / K)), the `mean ± SEM` the papers print. With one seed there is no SEM (null).
 * The engine does not import analysis/ (the arrows point the other way), so the two-line
 * formula lives here too; tests check it against hand-computed values.
 */

/** Mean over seeds and its standard error (null with fewer than two seeds). */
export interface SeedStat {
  readonly mean: number;
  readonly sem: number | null;
}

/** One benchmark's results over the seeds of an evaluation. */
export interface BenchmarkSummary {
  readonly kind: "benchmark-summary";
  readonly benchmark: string;
  readonly problems: number;
  /** Samples per problem. */
  readonly n: number;
  readonly seeds: number;
  /** avg@n: mean over problems of c/n. */
  readonly avg: SeedStat;
  /** pass@n: share of problems with at least one correct sample. */
  readonly pass: SeedStat;
  /** Per-seed values, in seed order. */
  readonly perSeed: readonly { readonly avg: number; readonly pass: number }[];
}

/**
 * Mean and SEM of per-seed values.
 *
 * @example
 * ```ts
 * seedStat([0.5, 0.7]); // { mean: 0.6, sem: 0.1 }
 * ```
 */
export function seedStat(values: readonly number[]): SeedStat {
  if (values.length === 0) throw new RangeError("seedStat needs at least one value");
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  if (values.length < 2) return { mean, sem: null };
  const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1);
  return { mean, sem: Math.sqrt(variance / values.length) };
}

/**
 * Summarizes the metrics of each seed (`benchmark/avg@n`, `benchmark/pass@n`, as the evaluation
 * records them) per benchmark, benchmarks in the order of `problems`.
 *
 * @example
 * ```ts
 * summarizeSeeds([{ "b/avg@4": 0.5, "b/pass@4": 1 }], new Map([["b", 2]]), 4)[0].avg.mean; // 0.5
 * ```
 */
export function summarizeSeeds(
  perSeed: readonly Readonly<Record<string, number>>[],
  problems: ReadonlyMap<string, number>,
  n: number,
): BenchmarkSummary[] {
  return [...problems].map(([benchmark, count]) => {
    const values = perSeed.map((metrics, i) => {
      const avg = metrics[`${benchmark}/avg@${n}`];
      const pass = metrics[`${benchmark}/pass@${n}`];
      if (avg === undefined || pass === undefined) {
        throw new RangeError(`seed ${i} recorded no avg@${n}/pass@${n} for ${benchmark}`);
      }
      return { avg, pass };
    });
    return Object.freeze({
      kind: "benchmark-summary",
      benchmark,
      problems: count,
      n,
      seeds: values.length,
      avg: seedStat(values.map((v) => v.avg)),
      pass: seedStat(values.map((v) => v.pass)),
      perSeed: values,
    });
  });
}
