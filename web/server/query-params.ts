/**
 * Strict reading of numeric URL parameters: a page, step or log position is a whole number that
 * fits exactly in a JS number, or the request is refused with 400 naming the parameter.
 */

/** A URL parameter or header that is not what the route takes; answered with 400. */
export class BadParameterError extends Error {
  override name = "BadParameterError";
  constructor(readonly parameter: string, readonly value: string) {
    super(
      `bad parameter ${parameter}=${JSON.stringify(value.slice(0, 40))}: expected a whole ` +
        `number from 0 to ${Number.MAX_SAFE_INTEGER}`,
    );
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
