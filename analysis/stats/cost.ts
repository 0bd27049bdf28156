import { StatsInputError } from "./stats-input-error.ts";

/**
 * Accuracy gained per trainable parameter (MADA-RL's efficiency figure): (acc - baseline) / params.
 *
 * @example
 * ```ts
 * gainPerParameter(0.419, 0.399, 1e6); // 2e-8
 * ```
 */
export function gainPerParameter(
  accuracy: number,
  baselineAccuracy: number,
  trainableParameters: number,
): number {
  if (!(trainableParameters > 0)) {
    throw new StatsInputError("trainableParameters", trainableParameters, "must be > 0");
  }
  return (accuracy - baselineAccuracy) / trainableParameters;
}
