/**
 * Gradient-norm stability of one agent in one run (the Dr. MAS claim is per agent). A step whose
 * gradient is exactly zero had no learning signal (every prompt group's rewards were equal, so
 * every advantage was 0): it is counted but left out of the median and max, as the spike rule
 * (`gradientSpikes` in analysis, the one the report and the dashboard use) leaves it out.
 */
import { gradNormStability } from "../analysis/mod.ts";

/** One agent's stability figures in one run; the figures are NaN with no informative step. */
export interface AgentStability {
  readonly agent: string;
  readonly steps: number;
  /** Steps with a zero gradient (no signal). */
  readonly zeroSteps: number;
  /** Steps with a NaN or infinite gradient norm (the optimizer skipped them). */
  readonly nonFinite: number;
  readonly median: number;
  readonly max: number;
  readonly maxOverMedian: number;
  /** Spikes by the analysis rule (`gradientSpikes`) with `spikeMultiple`. */
  readonly spikes: number;
}

/**
 * Stability of `norms` (one agent's gradient norm per step, in step order).
 *
 * @example
 * ```ts
 * agentStability("solver", [0, 1, 1.2, 0, 30, NaN], 10);
 * // { zeroSteps: 2, nonFinite: 1, median: 1.2, max: 30, spikes: 1, ... }
 * ```
 */
export function agentStability(
  agent: string,
  norms: readonly number[],
  spikeMultiple: number,
): AgentStability {
  const informative = norms.filter((n) => n !== 0);
  const zeroSteps = norms.length - informative.length;
  const nonFinite = informative.filter((n) => !Number.isFinite(n)).length;
  if (informative.length === nonFinite) {
    return {
      agent,
      steps: norms.length,
      zeroSteps,
      nonFinite,
      median: NaN,
      max: NaN,
      maxOverMedian: NaN,
      spikes: 0,
    };
  }
  const s = gradNormStability(informative, spikeMultiple);
  return {
    agent,
    steps: norms.length,
    zeroSteps,
    nonFinite,
    median: s.median,
    max: s.max,
    maxOverMedian: s.maxOverMedian,
    spikes: s.spikes,
  };
}
