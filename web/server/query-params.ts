/**
 * Strict reading of numeric URL parameters: a page, step or log position is a whole number that
 * fits exactly in a JS number, or the request is refused with 400 naming the parameter.
 */

/** A URL parameter or header that is not what the route takes; answered with 400. */
export class BadParameterError extends Error {
  override name = "BadParameterError";
  constructor(
    readonly parameter: string,
    readonly value: string,
    expected = `a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`,
  ) {
    super(`bad parameter ${parameter}=${JSON.stringify(value.slice(0, 40))}: expected ${expected}`);
  }
}

/**
 * The value of a whole-number parameter, or undefined when it is absent or empty.
 *
 * @example
 * ```ts
 * wholeNumberParam("page", "3"); // 3
 * wholeNumberParam("page", undefined); // undefined
 * wholeNumberParam("page", "-1"); // throws BadParameterError
 * ```
 */
export function wholeNumberParam(parameter: string, text: string | undefined): number | undefined {
  if (text === undefined || text === "") return undefined;
  const value = /^\d{1,16}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value)) throw new BadParameterError(parameter, text);
  return value;
}

/**
 * The value of a parameter that takes one of `choices`, or undefined when it is absent or empty.
 *
 * @example
 * ```ts
 * choiceParam("phase", "eval", ["rollout", "eval"]); // "eval"
 * choiceParam("phase", "test", ["rollout", "eval"]); // throws BadParameterError
 * ```
 */
export function choiceParam<C extends string>(
  parameter: string,
  text: string | undefined,
  choices: readonly C[],
): C | undefined {
  if (text === undefined || text === "") return undefined;
  if (!(choices as readonly string[]).includes(text)) {
    throw new BadParameterError(parameter, text, `one of ${choices.join(", ")}`);
  }
  return text as C;
}

/**
 * The value of a decimal-number parameter (such as a reward bound), or undefined when it is
 * absent or empty.
 *
 * @example
 * ```ts
 * numberParam("reward-min", "-0.5"); // -0.5
 * numberParam("reward-min", "1e999"); // throws BadParameterError
 * ```
 */
export function numberParam(parameter: string, text: string | undefined): number | undefined {
  if (text === undefined || text === "") return undefined;
  const value = /^-?\d{1,16}(\.\d{1,16})?([eE][-+]?\d{1,3})?$/.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(value)) throw new BadParameterError(parameter, text, "a finite number");
  return value;
}
