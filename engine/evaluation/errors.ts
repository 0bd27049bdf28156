/** Errors of an evaluation's inputs: each names the argument, the value and what would work. */

/**
 * The model, run, checkpoint or data an evaluation was given cannot be used. `field` is the
 * command-line option or config key at fault (e.g. `--model`), so a CLI can report it as usage.
 *
 * @example
 * ```ts
 * throw new EvaluationInputError("--model", "runs/x", "no such directory, and no run runs/x in the store");
 * ```
 */
export class EvaluationInputError extends Error {
  override name = "EvaluationInputError";
  constructor(readonly field: string, readonly value: string, detail: string) {
    super(`${field} ${value}: ${detail}`);
  }
}
