/**
 * Standard normal draws by Box-Muller, for weight initialization. Block `floor(i / 2)` of the
 * stream gives two 53-bit uniforms (u1, u2); index i is r*cos(2 pi u2) when even and r*sin when
 * odd, r = sqrt(-2 ln(1 - u1)) (1 - u1 lies in (0, 1], so the log is finite). Math.log/cos/sin
 * are V8's fdlibm ports: bit-identical on every Deno, not promised across JS engines.
 */
import { RandomArgumentError, requireIndex } from "./errors.ts";
import { INDEX_LIMIT, type RandomStream, streamBlock, wordsToUniform53 } from "./keyed.ts";

const block = new Uint32Array(4);

function polar(stream: RandomStream, pair: number): [number, number] {
  const w = streamBlock(stream, pair, 0, block);
  const r = Math.sqrt(-2 * Math.log(1 - wordsToUniform53(w[0], w[1])));
  return [r, 2 * Math.PI * wordsToUniform53(w[2], w[3])];
}

/**
 * Standard normal draw `index` (in [0, 2^33): two normals per Philox block).
 *
 * @example
 * ```ts
 * import { normal, randomStream } from "./mod.ts";
 * normal(randomStream({ seed: 3, purpose: "init:lm_head" }), 0);
 * ```
 */
export function normal(stream: RandomStream, index: number): number {
  requireIndex("index", index, 2 * INDEX_LIMIT, "an integer in [0, 2^33)");
  const [r, theta] = polar(stream, Math.floor(index / 2));
  return index % 2 === 0 ? r * Math.cos(theta) : r * Math.sin(theta);
}

/** Mean, standard deviation and first draw index for {@link fillNormal}. */
export interface FillNormalOptions {
  readonly mean?: number;
  readonly std?: number;
  readonly offset?: number;
}

/**
 * Fills `out[i] = mean + std * normal(stream, offset + i)`: the same values as calling
 * {@link normal} per element, computed one block per pair.
 *
 * @example
 * ```ts
 * import { fillNormal, randomStream } from "./mod.ts";
 * fillNormal(randomStream({ seed: 3, purpose: "init:layer0.wq" }), new Float32Array(64), { std: 0.02 });
 * ```
 */
export function fillNormal<T extends Float32Array | Float64Array>(
  stream: RandomStream,
  out: T,
  { mean = 0, std = 1, offset = 0 }: FillNormalOptions = {},
): T {
  if (!Number.isFinite(mean)) throw new RandomArgumentError("mean", mean, "a finite number");
  if (!Number.isFinite(std) || std < 0) {
    throw new RandomArgumentError("std", std, "a finite number >= 0");
  }
  requireIndex("offset", offset, 2 * INDEX_LIMIT - out.length + 1, "offset + length <= 2^33");
  let i = 0;
  while (i < out.length) {
    const index = offset + i;
    const [r, theta] = polar(stream, Math.floor(index / 2));
    if (index % 2 === 0) {
      out[i++] = mean + std * r * Math.cos(theta);
      if (i < out.length) out[i++] = mean + std * r * Math.sin(theta);
    } else {
      out[i++] = mean + std * r * Math.sin(theta);
    }
  }
  return out;
}
