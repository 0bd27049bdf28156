/**
 * Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel Random Numbers: As Easy as 1, 2, 3",
 * SC 2011): a keyed bijection on 128-bit counters. Written from the paper's description; checked
 * against Random123's published known-answer vectors in tests/random/philox_test.ts.
 */
import { RandomArgumentError } from "./errors.ts";

/** Round multipliers and Weyl key increments from the paper. */
const M0 = 0xd2511f53;
const M1 = 0xcd9e8d57;
const W0 = 0x9e3779b9;
const W1 = 0xbb67ae85;

/** The standard round count; fewer rounds are allowed only for known-answer checks. */
export const PHILOX_ROUNDS = 10;

/** High 32 bits of the 64-bit product of two uint32 values, exact in float64 arithmetic. */
function mulhi32(a: number, b: number): number {
  const al = a & 0xffff;
  const ah = a >>> 16;
  const bl = b & 0xffff;
  const bh = b >>> 16;
  const lh = al * bh;
  const hl = ah * bl;
  // Every partial product is below 2^32, so the sums below stay exact in a double.
  const carry = ((al * bl) >>> 16) + (lh & 0xffff) + (hl & 0xffff);
  return (ah * bh + (lh >>> 16) + (hl >>> 16) + (carry >>> 16)) >>> 0;
}

/**
 * Writes Philox4x32-R of (c0..c3, k0, k1) into `out[0..3]`. Allocation-free: the keyed streams
 * call it once per block.
 */
export function philoxInto(
  out: Uint32Array,
  c0: number,
  c1: number,
  c2: number,
  c3: number,
  k0: number,
  k1: number,
  rounds: number = PHILOX_ROUNDS,
): void {
  let x0 = c0 >>> 0, x1 = c1 >>> 0, x2 = c2 >>> 0, x3 = c3 >>> 0;
  let key0 = k0 >>> 0, key1 = k1 >>> 0;
  for (let r = 0; r < rounds; r++) {
    if (r > 0) {
      key0 = (key0 + W0) >>> 0;
      key1 = (key1 + W1) >>> 0;
    }
    const hi0 = mulhi32(M0, x0);
    const lo0 = Math.imul(M0, x0) >>> 0;
    const hi1 = mulhi32(M1, x2);
    const lo1 = Math.imul(M1, x2) >>> 0;
    x0 = (hi1 ^ x1 ^ key0) >>> 0;
    x1 = lo1;
    x2 = (hi0 ^ x3 ^ key1) >>> 0;
    x3 = lo0;
  }
  out[0] = x0;
  out[1] = x1;
  out[2] = x2;
  out[3] = x3;
}

/**
 * Philox4x32-R of a 4-word counter under a 2-word key (R = 10 unless given).
 *
 * @example
 * ```ts
 * philox4x32([0, 0, 0, 0], [0, 0]); // [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
 * ```
 */
export function philox4x32(
  counter: readonly [number, number, number, number],
  key: readonly [number, number],
  rounds: number = PHILOX_ROUNDS,
): [number, number, number, number] {
  for (const [i, word] of [...counter, ...key].entries()) {
    if (!Number.isInteger(word) || word < 0 || word > 0xffffffff) {
      const field = i < 4 ? `counter[${i}]` : `key[${i - 4}]`;
      throw new RandomArgumentError(field, word, "a uint32 (integer in [0, 2^32))");
    }
  }
  if (!Number.isInteger(rounds) || rounds < 1) {
    throw new RandomArgumentError("rounds", rounds, "a positive integer (10 for Philox4x32-10)");
  }
  const out = new Uint32Array(4);
  philoxInto(out, counter[0], counter[1], counter[2], counter[3], key[0], key[1], rounds);
  return [out[0], out[1], out[2], out[3]];
}
