/**
 * A per-run quantity over a cell's runs, as the report prints it: mean, standard error of the mean
 * and the 95% confidence interval of the mean (Student's t with n - 1 degrees of freedom).
 */
import { mean, summarize, tQuantileAt } from "../analysis/mod.ts";

/** Mean ± SEM and 95% CI of per-run values; null where n is too small to define them. */
export interface SampleStat {
  readonly n: number;
  readonly mean: number | null;
  readonly sem: number | null;
  readonly ci: readonly [number, number] | null;
  /** The per-run values, in run order. */
  readonly samples: readonly number[];
  /**
   * The seed of each sample, where a claim pairs its cells by seed (study/pairing.ts); absent in
   * a cell's own figures and in study.json files written before claims were paired.
   */
  readonly seeds?: readonly number[];
}

/**
 * Summarizes finite per-run values: mean for n >= 1, SEM and CI for n >= 2.
 *
 * @example
 * ```ts
 * sampleStat([0.4, 0.5, 0.6]); // { n: 3, mean: 0.5, sem: 0.0577..., ci: [0.25..., 0.74...] }
 * ```
 */
export function sampleStat(values: readonly number[]): SampleStat {
  const samples = [...values];
  if (samples.length === 0) return { n: 0, mean: null, sem: null, ci: null, samples };
  if (samples.length === 1) return { n: 1, mean: mean(samples), sem: null, ci: null, samples };
  const s = summarize(samples);
  const half = tQuantileAt(0.975, samples.length - 1) * s.sem;
  return { n: s.n, mean: s.mean, sem: s.sem, ci: [s.mean - half, s.mean + half], samples };
}
