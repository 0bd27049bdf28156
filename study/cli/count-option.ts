/**
 * A whole-number command-line option of the study commands, checked against its least value.
 */
import { UsageError } from "../../events/cli/mod.ts";

/**
 * The option's value as a number, or undefined when it was not given; anything but an integer
 * >= `least` is a usage error naming the option.
 *
 * @example
 * ```ts
 * countOption("seeds", "10", 2); // 10
 * countOption("seeds", undefined, 2); // undefined
 * ```
 */
export function countOption(
  name: string,
  value: string | undefined,
  least: number,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < least) {
    throw new UsageError(`--${name} must be an integer >= ${least}; got ${value}`);
  }
  return n;
}
