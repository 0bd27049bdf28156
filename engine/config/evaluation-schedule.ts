/**
 * When a run evaluates: the trainer runs its evaluation after these steps, and a study's time
 * estimate counts them (study/grid-time.ts).
 */
import type { NormalizedConfig } from "./normalize.ts";

/**
 * Whether the run evaluates after `step`: every `every_steps`, and always after the last.
 *
 * @example evaluatesAfter(config, config.steps - 1) // true
 */
export function evaluatesAfter(config: NormalizedConfig, step: number): boolean {
  const every = config.evaluation.every_steps;
  return (every > 0 && (step + 1) % every === 0) || step === config.steps - 1;
}
