import { gradientSpikes, SPIKE_MULTIPLE } from "./gradient-spikes.ts";
import { quantile } from "./quantile.ts";
import { StatsInputError } from "./stats-input-error.ts";

/** Training-stability figures of one worker group's gradient norms over its updates. */
export interface GradNormStability {
  readonly kind: "grad-norm-stability";
  /** Norms summarized: optimizer updates (more than steps with PPO epochs or mini-batches). */
  readonly steps: number;
  readonly median: number;
  readonly p99: number;
  readonly max: number;
  readonly maxOverMedian: number;
  /** Updates that are spikes by `gradientSpikes` with `spikeMultiple`. */
  readonly spikes: number;
  /** Updates whose norm is NaN or infinite (the optimizer skipped them). */
  readonly nonFinite: number;
}

/**
 * Grad-norm median, p99, max and max/median over the finite norms, the spike count by the one
 * rule (`gradientSpikes`: above `spikeMultiple` times the running median of the earlier finite
 * nonzero norms) and the non-finite count, of one series of norms in the order applied.
 *
 * @example
 * ```ts
 * gradNormStability([1, 1, 1, 50, NaN], 10).spikes; // 1
 * ```
 */
export function gradNormStability(
  norms: readonly number[],
  spikeMultiple = SPIKE_MULTIPLE,
): GradNormStability {
  const spikes = gradientSpikes(norms, spikeMultiple).filter(Boolean).length;
  const finite = norms.filter(Number.isFinite);
  if (finite.length === 0) {
    throw new StatsInputError("norms", norms.length, "no finite gradient norm to summarize");
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
