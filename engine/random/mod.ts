/**
 * Counter-based randomness for the engine (docs/ARCHITECTURE.md, "Determinism"): Philox4x32-10
 * and keyed streams whose every draw is a pure function of its coordinates and index, never of
 * call order.
 *
 * @example
 * ```ts
 * import { randomStream, uniformInt } from "../random/mod.ts";
 * const s = randomStream({ seed: 42, purpose: "task-generator", prompt: 7 });
 * const a = uniformInt(s, 0, 1, 99); // operand 1 of prompt 7, same on every run
 * ```
 */
export { RandomArgumentError } from "./errors.ts";
export { philox4x32, PHILOX_ROUNDS } from "./philox.ts";
export {
  type DrawCoordinates,
  INDEX_LIMIT,
  type RandomStream,
  randomStream,
  streamBlock,
  uniform24,
  uniform53,
} from "./keyed.ts";
export { shuffle, uniformInt } from "./integers.ts";
export {
  sampleCategorical,
  sampleLogits,
  type SamplingDistribution,
  samplingDistribution,
  type SamplingOptions,
} from "./categorical.ts";
export { fillNormal, type FillNormalOptions, normal } from "./normal.ts";
