import { InputError } from "../input-error.ts";

/**
 * A malformed reward input: names the field (with its position), the value and what is allowed.
 *
 * @example
 * ```ts
 * throw new RewardInputError("responses[3].length", -1, "a non-negative integer token count");
 * ```
 */
export class RewardInputError extends InputError {
  override name = "RewardInputError";
  constructor(field: string, value: unknown, allowed: string) {
    super("rewards", field, value, allowed);
  }
}
