/** mu/sigma of a list of rewards under either sigma convention, and the normalized advantage. */
import { AdvantageInputError } from "./errors.ts";
import type { BaselineStatistics, EstimatorOptions, SigmaConvention } from "./types.ts";

/**
 * mu and sigma of `values` (summed in the given order, so results are bit-stable).
 *
 * - All values equal (including a single value under `population`): mu is that value exactly and
 *   sigma 0, so every advantage is exactly 0 rather than a rounding residue divided by eps.
 * - A single value under `unbiased`: mu = 0, sigma = 1, as the Dr. MAS code does; the advantage
 *   is then R / (1 + eps).
 *
 * @example
 * ```ts
 * baselineStatistics([1, 0, 0, 1], "population"); // { mu: 0.5, sigma: 0.5, n: 4 }
 * ```
 */
export function baselineStatistics(
  values: readonly number[],
  convention: SigmaConvention,
): BaselineStatistics {
  const n = values.length;
  if (n === 0) throw new AdvantageInputError("values", "[]", "at least one reward");
  if (n === 1 && convention === "unbiased") return Object.freeze({ mu: 0, sigma: 1, n });
  if (values.every((v) => v === values[0])) return Object.freeze({ mu: values[0], sigma: 0, n });
  let sum = 0;
  for (const v of values) sum += v;
  const mu = sum / n;
  let squares = 0;
  for (const v of values) squares += (v - mu) ** 2;
  const sigma = Math.sqrt(squares / (convention === "population" ? n : n - 1));
  return Object.freeze({ mu, sigma, n });
}

/**
 * `(reward - mu) / (sigma + eps)`; exactly 0 when reward equals mu, so all-equal groups give 0
 * even with eps = 0. A zero denominator with reward != mu cannot come from a group's own
 * statistics and is rejected.
 *
 * @example
 * ```ts
 * normalizedAdvantage(1, { mu: 0.5, sigma: 0.5, n: 4 }, 1e-6); // 0.999998
 * ```
 */
export function normalizedAdvantage(
  reward: number,
  stats: BaselineStatistics,
  eps: number,
): number {
  if (reward === stats.mu) return 0;
  const scale = stats.sigma + eps;
  if (!(scale > 0)) {
    throw new AdvantageInputError("sigma + eps", scale, "> 0 when the reward differs from mu");
  }
  return (reward - stats.mu) / scale;
}

/** Throws unless the options are a known convention and a finite eps >= 0. */
export function checkEstimatorOptions(options: EstimatorOptions): void {
  if (options.sigma !== "population" && options.sigma !== "unbiased") {
    throw new AdvantageInputError("sigma", options.sigma, '"population" or "unbiased"');
  }
  if (!Number.isFinite(options.eps) || options.eps < 0) {
    throw new AdvantageInputError("eps", options.eps, "a finite number >= 0");
  }
}
