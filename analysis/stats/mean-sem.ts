import { StatsInputError } from "./stats-input-error.ts";

/** Mean, unbiased variance, standard error of the mean and count of one sample. */
export interface SampleSummary {
  readonly kind: "sample-summary";
  readonly n: number;
  readonly mean: number;
  readonly variance: number;
  readonly sem: number;
}

function requireFinite(field: string, xs: readonly number[]): void {
  xs.forEach((x, i) => {
    if (!Number.isFinite(x)) throw new StatsInputError(`${field}[${i}]`, x, "must be finite");
  });
}

/**
 * Arithmetic mean.
 *
 * @example
 * ```ts
 * mean([1, 2, 3]); // 2
 * ```
 */
export function mean(xs: readonly number[], field = "sample"): number {
  if (xs.length === 0) throw new StatsInputError(field, "[]", "need at least one value");
  requireFinite(field, xs);
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

/**
 * Unbiased (n - 1) variance, two-pass so that large offsets do not cancel.
 *
 * @example
 * ```ts
 * sampleVariance([1, 2, 3]); // 1
 * ```
 */
export function sampleVariance(xs: readonly number[], field = "sample"): number {
  if (xs.length < 2) {
    throw new StatsInputError(`${field}.length`, xs.length, "variance needs at least 2 values");
  }
  const m = mean(xs, field);
  return xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1);
}

/**
 * Mean and standard error of the mean (sqrt(var / n), unbiased variance): the `mean ± SEM` the
 * papers print over seeds.
 *
 * @example
 * ```ts
 * summarize([1, 2, 3]).sem; // 1 / sqrt(3)
 * ```
 */
export function summarize(xs: readonly number[], field = "sample"): SampleSummary {
  const variance = sampleVariance(xs, field);
  return Object.freeze({
    kind: "sample-summary",
    n: xs.length,
    mean: mean(xs, field),
    variance,
    sem: Math.sqrt(variance / xs.length),
  });
}
