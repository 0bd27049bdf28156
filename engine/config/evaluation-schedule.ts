/**
 * When a run evaluates: the trainer runs its evaluation after these steps, and a study's time
 * estimate counts them (study/grid-time.ts). A run of 0 steps has no step to evaluate after: it
 * evaluates its initial team once, and that evaluation carries step 0.
 */
import type { NormalizedConfig } from "./normalize.ts";

/**
 * Whether the run evaluates after `step` (0 to `steps` - 1): every `every_steps`, and always
 * after the last. A run of 0 steps has no such step; its evaluation is in
 * {@link evaluationSteps}.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "./normalize.ts";
 * import { evaluatesAfter } from "./evaluation-schedule.ts";
 *
 * declare const config: NormalizedConfig; // a run of at least one step
 * evaluatesAfter(config, config.steps - 1); // true: a run always evaluates after its last step
 * ```
 */
export function evaluatesAfter(config: NormalizedConfig, step: number): boolean {
  const every = config.evaluation.every_steps;
  return (every > 0 && (step + 1) % every === 0) || step === config.steps - 1;
}

/**
 * The steps the run's evaluations carry, ascending, one per evaluation: those it evaluates after
 * (`evaluatesAfter`), or for a run of 0 steps its one evaluation of the initial team, at step 0.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "./normalize.ts";
 * import { evaluationSteps } from "./evaluation-schedule.ts";
 *
 * declare const config: NormalizedConfig;
 * evaluationSteps(config).length; // the evaluations a full run of `config` makes
 * ```
 */
export function evaluationSteps(config: NormalizedConfig): number[] {
  if (config.steps === 0) return [0];
  return Array.from({ length: config.steps }, (_, step) => step)
    .filter((step) => evaluatesAfter(config, step));
}
