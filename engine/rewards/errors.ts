/**
 * A malformed reward input: names the field (with its position), the value and what is allowed.
 *
 * @example
 * ```ts
 * throw new RewardInputError("responses[3].length", -1, "a non-negative integer token count");
 * ```
 */
export class RewardInputError extends Error {
  override name = "RewardInputError";
  constructor(
    readonly field: string,
    readonly value: unknown,
    readonly allowed: string,
  ) {
    super(
      `rewards: ${field} = ${
        typeof value === "string" ? JSON.stringify(value) : String(value)
      } is not allowed; expected ${allowed}`,
    );
  }
}
