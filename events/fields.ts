/**
 * Field schemas shared by the event catalogue. Floats that a training step can legitimately
 * produce as NaN or Infinity (losses, gradient norms) accept non-finite values: the canonical
 * encoding spells them out, and dropping them would hide exactly the steps worth looking at.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { count, float } from "./fields.ts";
 *
 * const stats = z.strictObject({ mu: float, sigma: float, n: count });
 * ```
 */
import { z } from "zod";

/** Any JavaScript number, NaN and +-Infinity included. */
export const float = z.custom<number>((v) => typeof v === "number", {
  message: "expected a number (NaN and Infinity allowed)",
});

/** A non-negative integer: counts, indices, steps. */
export const count = z.number().int().nonnegative();

/** A non-empty name: agents, worker groups, benchmarks. */
export const name = z.string().min(1);

/** A SHA-256 digest as 64 lowercase hex digits. */
export const sha256 = z.string().regex(/^[0-9a-f]{64}$/, "expected 64 lowercase hex digits");

/** Token ids, stored as little-endian int32 bytes. */
export const tokenIds = z.instanceof(Int32Array, { message: "expected an Int32Array" });

/** Per-token log-probabilities, stored as little-endian float32 bytes. */
export const logprobs = z.instanceof(Float32Array, { message: "expected a Float32Array" });

/** Named scalar values: loss parts, reward components, metrics. */
export const floatRecord = z.record(z.string(), float);

/** Baseline statistics of a group: mean, standard deviation and sample count. */
export const baselineStats = z.strictObject({ mu: float, sigma: float, n: count });

/** Whether a rollout trained the policy or only measured it. */
export const phase = z.enum(["rollout", "eval"]);
