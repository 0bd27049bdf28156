import { InputError } from "../input-error.ts";

/**
 * A bad argument to a random-draw function: names the parameter, the value given and what is
 * allowed, so a caller deep inside a rollout can tell which coordinate was wrong.
 *
 * @example
 * ```ts
 * throw new RandomArgumentError("index", -1, "an integer in [0, 2^32)");
 * ```
 */
export class RandomArgumentError extends InputError {
  override name = "RandomArgumentError";
  constructor(field: string, value: unknown, allowed: string) {
    super("random", field, value, allowed);
  }
}

/** Throws unless `value` is an integer in [0, limit). */
export function requireIndex(field: string, value: number, limit: number, allowed: string): void {
  if (!Number.isInteger(value) || value < 0 || value >= limit) {
    throw new RandomArgumentError(field, value, allowed);
  }
}
