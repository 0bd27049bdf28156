/** Uniform integers and permutations from keyed streams, without modulo bias. */
import { RandomArgumentError, requireIndex } from "./errors.ts";
import { INDEX_LIMIT, type RandomStream, streamBlock } from "./keyed.ts";

const TWO_POW_32 = 2 ** 32;
const block = new Uint32Array(4);

/**
 * Uniform integer in [min, max] (inclusive; at most 2^32 values) for draw `index`.
 *
 * Rejection sampling: a 32-bit word x is accepted when x < 2^32 - (2^32 mod span), which leaves a
 * whole number of copies of [0, span) and so no modulo bias. Rejected words are replaced by the
 * next words of the same index (lanes 0, 1, ...), so the result stays a pure function of
 * (stream, index); the expected number of blocks is below 1.07 for any span.
 *
 * @example
 * ```ts
 * import { randomStream, uniformInt } from "./mod.ts";
 * uniformInt(randomStream({ seed: 1, purpose: "task-generator", prompt: 4 }), 0, 1, 6); // a die roll
 * ```
 */
export function uniformInt(stream: RandomStream, index: number, min: number, max: number): number {
  if (!Number.isSafeInteger(min)) throw new RandomArgumentError("min", min, "a safe integer");
  if (!Number.isSafeInteger(max) || max < min || max - min + 1 > TWO_POW_32) {
    throw new RandomArgumentError(
      "max",
      max,
      `a safe integer in [min, min + 2^32 - 1] (min=${min})`,
    );
  }
  const span = max - min + 1;
  const limit = TWO_POW_32 - (TWO_POW_32 % span);
  for (let lane = 0; lane < INDEX_LIMIT; lane++) {
    streamBlock(stream, index, lane, block);
    for (const x of block) {
      if (x < limit) return min + (x % span);
    }
  }
  // 2^34 consecutive rejections, each with probability < 1/2, does not happen.
  throw new Error("uniformInt: exhausted every lane (unreachable)");
}

/**
 * A keyed Fisher-Yates shuffle: returns a new array; draw `index` i picks the swap partner of
 * position i, so the permutation is a pure function of (stream, items.length).
 *
 * @example
 * ```ts
 * import { randomStream, shuffle } from "./mod.ts";
 * shuffle(randomStream({ seed: 1, purpose: "batch-order", step: 2 }), ["a", "b", "c"]);
 * ```
 */
export function shuffle<T>(stream: RandomStream, items: readonly T[]): T[] {
  requireIndex("items.length", items.length, INDEX_LIMIT, "fewer than 2^32 items");
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = uniformInt(stream, i, 0, i);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
