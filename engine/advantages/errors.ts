import { InputError } from "../input-error.ts";

/**
 * A malformed advantage-estimation input: names the field (with its position in the group), the
 * value and what is allowed.
 *
 * @example
 * ```ts
 * throw new AdvantageInputError("trajectories[2].reward", NaN, "a finite number");
 * ```
 */
export class AdvantageInputError extends InputError {
  override name = "AdvantageInputError";
  constructor(field: string, value: unknown, allowed: string) {
    super("advantages", field, value, allowed);
  }
}
