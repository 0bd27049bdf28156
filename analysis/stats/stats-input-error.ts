/**
 * A statistic asked of inputs it is not defined for. Carries the offending field and value so a
 * caller (or a CLI user) can see what to fix.
 *
 * @example
 * ```ts
 * throw new StatsInputError("k", 20, "k must be <= n (n = 16)");
 * ```
 */
export class StatsInputError extends Error {
  override name = "StatsInputError";
  constructor(
    readonly field: string,
    readonly value: unknown,
    detail: string,
  ) {
    super(`${field} = ${String(value)}: ${detail}`);
  }
}

/** Raises a StatsInputError unless `value` is a non-negative integer. */
export function requireCount(field: string, value: number): void {
  if (!Number.isInteger(value) || value < 0) {
    throw new StatsInputError(field, value, "must be a non-negative integer");
  }
}
