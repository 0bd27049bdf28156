/** The learning rate of a worker group at a training step. */
import type { WorkerGroup } from "../config/mod.ts";

/**
 * Linear warmup over the first `warmup_ratio` of the run's steps (never at lr 0: step s of w
 * warmup steps gets lr * (s + 1) / (w + 1)), then the configured lr. Every update of a step (PPO
 * mini-batches and epochs) uses the step's rate.
 *
 * @example
 * ```ts
 * import { learningRate } from "./lr-schedule.ts";
 *
 * // 2 warmup steps of 20; step 0 gets 1e-4 * 1 / 3
 * learningRate({ lr: 1e-4, warmup_ratio: 0.1 }, 0, 20); // 3.3333333333333335e-5
 * ```
 */
export function learningRate(
  optimizer: Pick<WorkerGroup["optimizer"], "lr" | "warmup_ratio">,
  step: number,
  steps: number,
): number {
  const warmupSteps = Math.ceil(optimizer.warmup_ratio * steps);
  return step < warmupSteps ? optimizer.lr * (step + 1) / (warmupSteps + 1) : optimizer.lr;
}
