/**
 * The shape every engine module's bad-input error shares: the module, the field (with its position
 * in a list), the value given and what is allowed, so a caller deep inside a rollout can tell what
 * was wrong and how to fix it.
 *
 * @example
 * ```ts
 * class RewardInputError extends InputError {
 *   override name = "RewardInputError";
 *   constructor(field: string, value: unknown, allowed: string) {
 *     super("rewards", field, value, allowed);
 *   }
 * }
 * ```
 */
export class InputError extends Error {
  constructor(
    readonly area: string,
    readonly field: string,
    readonly value: unknown,
    readonly allowed: string,
  ) {
    super(`${area}: ${field} = ${describe(value)} is not allowed; expected ${allowed}`);
  }
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "bigint") return `${value}n`;
  return String(value);
}
