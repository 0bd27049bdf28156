/**
 * A malformed advantage-estimation input: names the field (with its position in the group), the
 * value and what is allowed.
 *
 * @example
 * ```ts
 * throw new AdvantageInputError("trajectories[2].reward", NaN, "a finite number");
 * ```
 */
export class AdvantageInputError extends Error {
  override name = "AdvantageInputError";
  constructor(
    readonly field: string,
    readonly value: unknown,
    readonly allowed: string,
  ) {
    super(
      `advantages: ${field} = ${
        typeof value === "string" ? JSON.stringify(value) : String(value)
      } is not allowed; expected ${allowed}`,
    );
  }
}
