/**
 * Exact rationals on BigInt, always reduced with a positive denominator: the answers of generated
 * arithmetic tasks are exact, never floats.
 *
 * @example
 * ```ts
 * toLatex(divide(rational(7n), rational(3n))); // "\\frac{7}{3}"
 * ```
 */

/** A reduced fraction num/den with den > 0. */
export interface Rational {
  readonly num: bigint;
  readonly den: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/** Builds num/den in lowest terms; throws on a zero denominator. */
export function rational(num: bigint, den = 1n): Rational {
  if (den === 0n) throw new RangeError(`rational: zero denominator (numerator ${num})`);
  const sign = den < 0n ? -1n : 1n;
  const g = gcd(num, den) || 1n;
  return Object.freeze({ num: (sign * num) / g, den: (sign * den) / g });
}

export function add(a: Rational, b: Rational): Rational {
  return rational(a.num * b.den + b.num * a.den, a.den * b.den);
}

export function subtract(a: Rational, b: Rational): Rational {
  return rational(a.num * b.den - b.num * a.den, a.den * b.den);
}

export function multiply(a: Rational, b: Rational): Rational {
  return rational(a.num * b.num, a.den * b.den);
}

export function divide(a: Rational, b: Rational): Rational {
  return rational(a.num * b.den, a.den * b.num);
}

export function isZero(a: Rational): boolean {
  return a.num === 0n;
}

/** LaTeX: `42`, `-7`, `\frac{7}{3}`, `-\frac{7}{3}`. */
export function toLatex(a: Rational): string {
  if (a.den === 1n) return a.num.toString();
  const sign = a.num < 0n ? "-" : "";
  const abs = a.num < 0n ? -a.num : a.num;
  return `${sign}\\frac{${abs}}{${a.den}}`;
}
