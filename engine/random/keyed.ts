/**
 * Keyed random streams: every draw is a pure function of
 * `(seed, purpose, step, wg, agent, prompt, sample, turn, index)` (docs/ARCHITECTURE.md,
 * "Determinism"), so the order in which rollouts finish, or how many other draws happened first,
 * never changes a value.
 *
 * Derivation: SHA-256 of a versioned canonical JSON of the coordinates gives 128 bits; 64 become
 * the Philox key and 64 the top half of the counter. The counter's low words are
 * `[index, lane]`: `index` is the caller's draw index, `lane` lets one draw consume more than one
 * block (rejection sampling) without touching any other index.
 *
 * The kinds of draw overlap (uniform53, uniform24, uniformInt and sampleCategorical at index i
 * read block i; normal at i reads block floor(i/2)), so a stream should serve one kind of draw;
 * give different uses different purposes rather than sharing a stream.
 */
import { createHash } from "node:crypto";
import { RandomArgumentError, requireIndex } from "./errors.ts";
import { philoxInto } from "./philox.ts";

/** Where a draw belongs. Absent coordinates are encoded as null, distinct from 0. */
export interface DrawCoordinates {
  /** Run seed: an integer in [0, 2^53). */
  readonly seed: number;
  /** What the draws are for, e.g. "sample-token", "task-generator", "init:layer0.wq". */
  readonly purpose: string;
  readonly step?: number;
  readonly wg?: string | number;
  readonly agent?: string | number;
  readonly prompt?: string | number;
  readonly sample?: number;
  readonly turn?: number;
}

/** A keyed stream: a frozen value; draws take it plus an explicit index. */
export interface RandomStream {
  readonly kind: "random-stream";
  readonly coordinates: DrawCoordinates;
  /** Philox key words derived from the coordinates. */
  readonly key: readonly [number, number];
  /** Counter words 2 and 3 derived from the coordinates. */
  readonly tail: readonly [number, number];
}

/** Bumped if the derivation ever changes, so old and new streams can never be confused. */
const DERIVATION_VERSION = "polyrl/random/v1";
/** Largest draw index + 1: the index is one counter word. */
export const INDEX_LIMIT = 2 ** 32;

function checkCount(field: string, value: number | undefined): void {
  if (value !== undefined) {
    requireIndex(field, value, Number.MAX_SAFE_INTEGER + 1, "a non-negative safe integer");
  }
}

function checkId(field: string, value: string | number | undefined): void {
  if (typeof value === "string") return;
  if (value !== undefined) {
    requireIndex(field, value, Number.MAX_SAFE_INTEGER + 1, "a string or non-negative integer");
  }
}

/**
 * Derives the stream for a set of coordinates. One SHA-256 per stream; draws are then one Philox
 * block each.
 *
 * @example
 * ```ts
 * const s = randomStream({ seed: 7, purpose: "sample-token", step: 3, agent: "solver", sample: 1 });
 * const u = uniform53(s, 0); // the first token's uniform, the same on every run
 * ```
 */
export function randomStream(coordinates: DrawCoordinates): RandomStream {
  const { seed, purpose, step, wg, agent, prompt, sample, turn } = coordinates;
  requireIndex("seed", seed, Number.MAX_SAFE_INTEGER + 1, "an integer in [0, 2^53)");
  if (typeof purpose !== "string" || purpose.length === 0) {
    throw new RandomArgumentError("purpose", purpose, "a non-empty string naming the draw's use");
  }
  checkCount("step", step);
  checkId("wg", wg);
  checkId("agent", agent);
  checkId("prompt", prompt);
  checkCount("sample", sample);
  checkCount("turn", turn);
  const canonical = JSON.stringify([
    DERIVATION_VERSION,
    seed,
    purpose,
    step ?? null,
    wg ?? null,
    agent ?? null,
    prompt ?? null,
    sample ?? null,
    turn ?? null,
  ]);
  const digest = createHash("sha256").update(canonical, "utf8").digest();
  const view = new DataView(digest.buffer, digest.byteOffset, digest.byteLength);
  return Object.freeze({
    kind: "random-stream" as const,
    coordinates: Object.freeze({ ...coordinates }),
    key: Object.freeze([view.getUint32(0, false), view.getUint32(4, false)] as const),
    tail: Object.freeze([view.getUint32(8, false), view.getUint32(12, false)] as const),
  });
}

/**
 * The four 32-bit words of block `(index, lane)` of a stream, written into `out` (allocation-free
 * for hot loops; pass a reused Uint32Array(4)).
 */
export function streamBlock(
  stream: RandomStream,
  index: number,
  lane: number,
  out: Uint32Array,
): Uint32Array {
  // `x >>> 0 === x` holds exactly for integers in [0, 2^32): the hot path skips the full check.
  if (index >>> 0 !== index) requireIndex("index", index, INDEX_LIMIT, "an integer in [0, 2^32)");
  if (lane >>> 0 !== lane) requireIndex("lane", lane, INDEX_LIMIT, "an integer in [0, 2^32)");
  philoxInto(out, index, lane, stream.tail[0], stream.tail[1], stream.key[0], stream.key[1]);
  return out;
}

// Single-threaded JS: draws never interleave, so one scratch block is safe to share.
const scratch = new Uint32Array(4);

const TWO_POW_24 = 2 ** 24;
const TWO_POW_26 = 2 ** 26;
const TWO_POW_53 = 2 ** 53;

/** Uniform in [0, 1) with 53 random bits from two 32-bit words. */
export function wordsToUniform53(hi: number, lo: number): number {
  return ((hi >>> 5) * TWO_POW_26 + (lo >>> 6)) / TWO_POW_53;
}

/**
 * Uniform float in [0, 1) with 53-bit resolution (a multiple of 2^-53): draw `index` of `stream`.
 *
 * @example
 * ```ts
 * uniform53(randomStream({ seed: 1, purpose: "demo" }), 0); // same value every run
 * ```
 */
export function uniform53(stream: RandomStream, index: number): number {
  const w = streamBlock(stream, index, 0, scratch);
  return wordsToUniform53(w[0], w[1]);
}

/**
 * Uniform float in [0, 1) with 24-bit resolution, exactly representable as float32 (for values
 * that end up in Float32Array and must not round up to 1).
 *
 * @example
 * ```ts
 * new Float32Array([uniform24(randomStream({ seed: 1, purpose: "dropout" }), 5)]);
 * ```
 */
export function uniform24(stream: RandomStream, index: number): number {
  const w = streamBlock(stream, index, 0, scratch);
  return (w[0] >>> 8) / TWO_POW_24;
}
