/**
 * The gradient-spike rule, the one every figure of training stability uses: the report's
 * stability table, the dashboard's spike markers and the study's per-agent spike counts.
 */
import { RunningMedian } from "./running-median.ts";
import { StatsInputError } from "./stats-input-error.ts";

/**
 * A gradient norm above this many times the running median is a spike: far outside the ordinary
 * update-to-update variation of a healthy run (within a few times its median), so only blow-ups
 * count. Reports and the study grid may pass another multiple; everything else uses this one.
 */
export const SPIKE_MULTIPLE = 10;

/**
 * Which updates of one series of gradient norms (one worker group's or one agent's, one norm
 * per optimizer update, in the order applied) are spikes. An update is a spike when its norm is
 * finite and above `multiple` times the median of the informative norms before it. Informative
 * means finite and nonzero:
 *
 * - a NaN or infinite norm is an update the optimizer skipped (counted as non-finite, never as a
 *   spike), and it says nothing about the scale of the others;
 * - a zero norm is an update without learning signal (every advantage 0: each prompt group's
 *   rewards were all equal). Counted in, a run of such updates drives the median to 0 and makes
 *   the first informative update after it a "spike".
 *
 * The median, not the mean, so that one spike does not raise the bar for the next; running
 * (earlier updates only), so an update is judged by what came before it and an early burst does
 * not hide a later one. The first informative update is never a spike.
 *
 * @example
 * ```ts
 * gradientSpikes([0, 0, 1, 1.2, NaN, 30, 1]); // [false, false, false, false, false, true, false]
 * ```
 */
export function gradientSpikes(norms: readonly number[], multiple = SPIKE_MULTIPLE): boolean[] {
  if (!(multiple > 0)) throw new StatsInputError("multiple", multiple, "must be > 0");
  const earlier = new RunningMedian();
  return norms.map((norm) => {
    if (!Number.isFinite(norm) || norm === 0) return false;
    const spike = earlier.size > 0 && norm > multiple * earlier.median;
    earlier.push(norm);
    return spike;
  });
}
