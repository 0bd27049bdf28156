/** Axis arithmetic of the static charts: a linear map and "nice" tick values (1, 2, 5 × 10^k). */

/**
 * A linear map from [d0, d1] to [r0, r1]; a degenerate domain maps to the middle of the range.
 *
 * @example
 * ```ts
 * linearScale(0, 10, 0, 100)(2.5); // 25
 * ```
 */
export function linearScale(d0: number, d1: number, r0: number, r1: number): (x: number) => number {
  if (d1 === d0) return () => (r0 + r1) / 2;
  return (x) => r0 + ((x - d0) / (d1 - d0)) * (r1 - r0);
}

/**
 * About `count` round tick values covering [lo, hi]: steps of 1, 2 or 5 times a power of ten; the
 * first and last tick enclose the data, so they can serve as the axis bounds.
 *
 * @example
 * ```ts
 * niceTicks(0, 0.93, 5); // [0, 0.2, 0.4, 0.6, 0.8, 1]
 * ```
 */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(Number.isFinite(lo) && Number.isFinite(hi))) {
    throw new RangeError(`tick bounds must be finite; got ${lo}, ${hi}`);
  }
  if (hi < lo) [lo, hi] = [hi, lo];
  if (hi === lo) {
    // A flat series: all zero (e.g. no correct answer yet) gets [0, 1], others a band around it.
    return lo === 0
      ? niceTicks(0, 1, count)
      : niceTicks(lo - Math.abs(lo) / 2, hi + Math.abs(lo) / 2, count);
  }
  const raw = (hi - lo) / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw)!;
  const first = Math.floor(lo / step + 1e-9);
  const last = Math.ceil(hi / step - 1e-9);
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  const ticks: number[] = [];
  for (let i = first; i <= last; i++) ticks.push(Number((i * step).toFixed(decimals)));
  return ticks;
}

/**
 * A tick value as text: up to 4 significant digits, no trailing zeros.
 *
 * @example
 * ```ts
 * tickText(0.30000000000000004); // "0.3"
 * ```
 */
export function tickText(x: number): string {
  if (x === 0) return "0";
  if (Math.abs(x) >= 1e5 || Math.abs(x) < 1e-3) return x.toExponential(1);
  return String(Number(x.toPrecision(4)));
}
