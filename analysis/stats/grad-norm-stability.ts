import { quantile } from "./quantile.ts";
import { StatsInputError } from "./stats-input-error.ts";

/** Training-stability figures of one worker group's gradient norms over steps. */
export interface GradNormStability {
  readonly kind: "grad-norm-stability";
  readonly steps: number;
  readonly median: number;
  readonly p99: number;
  readonly max: number;
  readonly maxOverMedian: number;
  /** Steps whose norm exceeds `spikeMultiple` times the median of all earlier finite norms. */
  readonly spikes: number;
  /** Steps whose norm is NaN or infinite (the optimizer skipped them). */
  readonly nonFinite: number;
}

/**
 * Grad-norm median, p99, max, max/median, spike count and non-finite count, over the finite
 * norms in step order. A spike is judged against the running (expanding) median of the norms
 * before it, so an early burst does not hide a later one.
 *
 * @example
 * ```ts
 * gradNormStability([1, 1, 1, 50, NaN], 10).spikes; // 1
 * ```
 */
export function gradNormStability(norms: readonly number[], spikeMultiple = 10): GradNormStability {
  if (!(spikeMultiple > 0)) {
    throw new StatsInputError("spikeMultiple", spikeMultiple, "must be > 0");
  }
  const finite = norms.filter(Number.isFinite);
  if (finite.length === 0) {
    throw new StatsInputError("norms", norms.length, "no finite gradient norm to summarize");
  }
  let spikes = 0;
  for (let i = 1; i < finite.length; i++) {
    if (finite[i] > spikeMultiple * quantile(finite.slice(0, i), 0.5)) spikes++;
  }
  const median = quantile(finite, 0.5);
  const max = Math.max(...finite);
  return Object.freeze({
    kind: "grad-norm-stability",
    steps: norms.length,
    median,
    p99: quantile(finite, 0.99),
    max,
    maxOverMedian: max / median,
    spikes,
    nonFinite: norms.length - finite.length,
  });
}
