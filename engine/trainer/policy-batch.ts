/**
 * A worker group's training batch from the step's turns: each turn is one sequence (its prompt
 * then its response), the loss covers the response tokens, and every response token carries its
 * action's advantage (the outcome reward broadcast over the output, as in GRPO and Dr. MAS).
 */
import type { PolicyBatch } from "../../adapters/onnx/train-step/mod.ts";

/** One agent turn to train on. */
export interface TrainingTurn {
  /** The agent that acted: a shared worker group's gradient is split by it for the record. */
  readonly agent: string;
  readonly promptTokens: Int32Array;
  readonly responseTokens: Int32Array;
  /** Generation-time logprobs of the response tokens (the behaviour policy). */
  readonly logprobs: Float32Array;
  readonly advantage: number;
  /**
   * Per-token factors of the advantage over the response tokens (truncated importance weights of
   * a server-sampled turn, engine/trainer/rollout-correction.ts); absent: 1.
   */
  readonly advantageWeights?: Float32Array;
}

/**
 * Right-padded next-token batch: position t predicts token t+1; pads are masked everywhere.
 *
 * @example
 * ```ts
 * import { policyBatch } from "./policy-batch.ts";
 *
 * const batch = policyBatch([{
 *   agent: "solver",
 *   promptTokens: Int32Array.of(1, 2),
 *   responseTokens: Int32Array.of(3),
 *   logprobs: Float32Array.of(-0.5),
 *   advantage: 1,
 * }]);
 * batch.lossMask; // Float32Array [0, 1]: position 1 predicts the response token 3
 * ```
 */
export function policyBatch(turns: readonly TrainingTurn[]): PolicyBatch {
  const seq = Math.max(...turns.map((t) => t.promptTokens.length + t.responseTokens.length)) - 1;
  const n = turns.length * seq;
  const tokens = new Int32Array(n);
  const targets = new Int32Array(n);
  const attentionMask = new Float32Array(n);
  const lossMask = new Float32Array(n);
  const advantages = new Float32Array(n);
  const oldLogprobs = new Float32Array(n);
  turns.forEach((t, row) => {
    const all = new Int32Array(t.promptTokens.length + t.responseTokens.length);
    all.set(t.promptTokens);
    all.set(t.responseTokens, t.promptTokens.length);
    const at = row * seq;
    tokens.set(all.subarray(0, all.length - 1), at);
    targets.set(all.subarray(1), at);
    attentionMask.fill(1, at, at + all.length - 1);
    // Response token j is predicted at position promptLength - 1 + j.
    const first = at + t.promptTokens.length - 1;
    lossMask.fill(1, first, first + t.responseTokens.length);
    if (t.advantageWeights) {
      t.advantageWeights.forEach((w, j) => advantages[first + j] = t.advantage * w);
    } else advantages.fill(t.advantage, first, first + t.responseTokens.length);
    oldLogprobs.set(t.logprobs, first);
  });
  return {
    batch: turns.length,
    seq,
    tokens,
    targets,
    attentionMask,
    lossMask,
    advantages,
    oldLogprobs,
  };
}

/**
 * Splits per-token values laid out like `policyBatch(turns)` (e.g. logprobs a policy computed on
 * that batch) back into one array per turn, over its response tokens.
 *
 * @example
 * ```ts
 * import { policyBatch, responseValues, type TrainingTurn } from "./policy-batch.ts";
 * import type { GroupPolicy } from "./rollout/mod.ts";
 *
 * declare const policy: GroupPolicy;
 * declare const turns: readonly TrainingTurn[];
 * const batch = policyBatch(turns);
 * const perTurn = responseValues(batch, turns, await policy.logprobs(batch, 1));
 * perTurn[0].length === turns[0].responseTokens.length; // true
 * ```
 */
export function responseValues(
  batch: Pick<PolicyBatch, "seq">,
  turns: readonly TrainingTurn[],
  values: Float32Array,
): Float32Array[] {
  return turns.map((t, row) => {
    const first = row * batch.seq + t.promptTokens.length - 1;
    return values.slice(first, first + t.responseTokens.length);
  });
}
