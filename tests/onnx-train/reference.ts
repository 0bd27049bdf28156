/**
 * Pure-TypeScript float64 references for the graph-level optimizer and the clipped policy
 * objective, written straight from the formulas (AdamW: Loshchilov & Hutter; PPO clip with
 * asymmetric epsilons; KL estimators k1 and k3 of Schulman's "Approximating KL divergence").
 */

/** AdamW hyperparameters in the form the graphs take them. */
export interface AdamWHyper {
  readonly lr: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
}

/**
 * One AdamW update of one tensor at 1-based step `t` (decoupled decay, bias correction).
 * Returns the new parameter and moments.
 */
export function adamwStep(
  param: readonly number[],
  grad: readonly number[],
  m: readonly number[],
  v: readonly number[],
  t: number,
  h: AdamWHyper,
): { param: number[]; m: number[]; v: number[] } {
  const m2 = m.map((mi, i) => h.beta1 * mi + (1 - h.beta1) * grad[i]);
  const v2 = v.map((vi, i) => h.beta2 * vi + (1 - h.beta2) * grad[i] * grad[i]);
  const bc1 = 1 - h.beta1 ** t;
  const bc2 = 1 - h.beta2 ** t;
  const p2 = param.map((p, i) =>
    p - h.lr * (m2[i] / bc1 / (Math.sqrt(v2[i] / bc2) + h.eps) + h.weightDecay * p)
  );
  return { param: p2, m: m2, v: v2 };
}

/** Global L2 norm over several tensors. */
export function globalNorm(grads: readonly (readonly number[])[]): number {
  return Math.sqrt(grads.flat().reduce((s, g) => s + g * g, 0));
}

/** Scale applied to every gradient so that the global norm is at most `maxNorm`. */
export function clipScale(norm: number, maxNorm: number): number {
  return Math.min(1, maxNorm / (norm + 1e-6));
}

/** Loss aggregation modes of the policy objective. */
export type LossAgg =
  | "token-mean"
  | "seq-mean-token-sum"
  | "seq-mean-token-mean"
  | "seq-mean-token-sum-norm"
  | "seq-sum-const";

/** Inputs of the policy objective for one batch, [B][T] arrays aligned with target positions. */
export interface PolicyBatch {
  readonly targets: readonly (readonly number[])[];
  readonly lossMask: readonly (readonly number[])[];
  readonly advantages: readonly (readonly number[])[];
  readonly oldLogprobs: readonly (readonly number[])[];
  readonly refLogprobs?: readonly (readonly number[])[];
}

/** Objective settings. */
export interface PolicyHyper {
  readonly clipLow: number;
  readonly clipHigh: number;
  readonly klCoef: number;
  readonly kl: "k1" | "k3" | null;
  readonly agg: LossAgg;
  /** The constant of seq-sum-const and seq-mean-token-sum-norm. */
  readonly aggConstant: number;
  /**
   * Rows per loss micro-batch: each run of this many rows is aggregated alone and scaled by
   * 1 / max(1, rows // microBatch), as veRL's actor (default: the whole batch at once).
   */
  readonly microBatch?: number;
  /** Logprob temperature (> 0): every distribution is softmax(logits / temperature). */
  readonly temperature: number;
  /** "likelihood": -advantage * log p per token, no ratio (default "clipped"). */
  readonly objective?: "clipped" | "likelihood";
  /** Dual-clip bound c: where A < 0 the clipped loss is min(loss, -A * c) (default none). */
  readonly dualClip?: number;
  /** k3 is clamped to [-klClamp, klClamp] (default none). */
  readonly klClamp?: number;
  /** The loss subtracts entropyCoeff * the entropy, aggregated as the policy loss (default 0). */
  readonly entropyCoeff?: number;
}

/** Loss and metrics of the policy objective. */
export interface PolicyResult {
  readonly loss: number;
  readonly policyLoss: number;
  readonly klLoss: number;
  readonly clipFraction: number;
  readonly approxKl: number;
  readonly entropy: number;
  /** The largest ratio over the loss tokens. */
  readonly maxRatio: number;
  /** Fraction of loss tokens whose loss the dual clip capped. */
  readonly dualClipFraction: number;
  /** Fraction of loss tokens whose k3 the clamp bounded. */
  readonly klClampFraction: number;
}

/** log softmax of one row, float64. */
export function logSoftmax(row: readonly number[]): number[] {
  const max = Math.max(...row);
  const lse = max + Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0));
  return row.map((x) => x - lse);
}

/**
 * The clipped policy objective on logits [B][T][V] (float64 throughout), of the tempered policy
 * softmax(logits / temperature) as the rollout sampled it.
 *
 * @example
 * ```ts
 * import { policyObjective } from "./reference.ts";
 *
 * const logits = [[[0, 1], [2, 0]]]; // one row, two positions, vocabulary 2
 * const batch = {
 *   targets: [[1, 0]], // logprobs -0.3133 and -0.1269 now
 *   lossMask: [[1, 1]],
 *   advantages: [[1, -1]],
 *   oldLogprobs: [[-0.5, -0.1269]], // ratios 1.205 and 1.000
 * };
 * const r = policyObjective(logits, batch, {
 *   clipLow: 0.2,
 *   clipHigh: 0.28,
 *   klCoef: 0,
 *   kl: null,
 *   agg: "token-mean",
 *   aggConstant: 1,
 *   temperature: 1,
 * });
 * r.loss; // -0.1027 = -(1.205 * 1 + 1.000 * -1) / 2, no ratio clipped
 * ```
 */
export function policyObjective(
  logits: readonly (readonly (readonly number[])[])[],
  batch: PolicyBatch,
  h: PolicyHyper,
): PolicyResult {
  const B = logits.length;
  const lengths = batch.lossMask.map((row) => row.reduce((s, x) => s + x, 0));
  const tokens = lengths.reduce((s, n) => s + n, 0);
  // The rows aggregated together (the batch, or each loss micro-batch) and their scale.
  const size = h.microBatch ?? B;
  const accumulation = Math.max(1, Math.floor(B / size));
  let pg = 0, kl = 0, clip = 0, approx = 0, ent = 0, entLoss = 0;
  let maxRatio = 0, dualClipped = 0, klClamped = 0;
  for (let b = 0; b < B; b++) {
    const len = lengths[b];
    const group = lengths.slice(b - (b % size), b - (b % size) + size);
    const groupTokens = group.reduce((s, n) => s + n, 0);
    const groupSeqs = group.filter((n) => n > 0).length;
    const perGroup = {
      "token-mean": 1 / groupTokens,
      "seq-mean-token-sum": 1 / groupSeqs,
      "seq-mean-token-mean": 1 / (Math.max(len, 1) * groupSeqs),
      "seq-mean-token-sum-norm": 1 / h.aggConstant,
      "seq-sum-const": 1 / (h.aggConstant * groupSeqs),
    }[h.agg];
    const weight = perGroup / accumulation;
    for (let t = 0; t < logits[b].length; t++) {
      const mask = batch.lossMask[b][t];
      const lp = logSoftmax(logits[b][t].map((x) => x / h.temperature));
      const logp = lp[batch.targets[b][t]];
      const old = batch.oldLogprobs[b][t];
      const adv = batch.advantages[b][t];
      const ratio = Math.exp(logp - old);
      const l1 = -adv * ratio;
      const l2 = -adv * Math.min(Math.max(ratio, 1 - h.clipLow), 1 + h.clipHigh);
      const likelihood = h.objective === "likelihood";
      const clipped = Math.max(l1, l2);
      const dual = h.dualClip !== undefined && adv < 0
        ? Math.min(clipped, -adv * h.dualClip)
        : clipped;
      pg += weight * mask * (likelihood ? -adv * logp : dual);
      if (mask > 0) maxRatio = Math.max(maxRatio, ratio);
      dualClipped += mask * (dual < clipped ? 1 : 0) / tokens;
      if (h.kl && batch.refLogprobs) {
        const d = batch.refLogprobs[b][t] - logp;
        const k = h.kl === "k1" ? -d : Math.exp(d) - d - 1;
        const bound = h.kl === "k3" ? h.klClamp ?? Infinity : Infinity;
        kl += weight * mask * Math.min(Math.max(k, -bound), bound);
        klClamped += mask * (Math.abs(k) > bound ? 1 : 0) / tokens;
      }
      if (!likelihood) {
        clip += mask * (l2 > l1 ? 1 : 0) / tokens;
        approx += mask * (old - logp) / tokens;
      }
      const entropy = -lp.reduce((s, x) => s + Math.exp(x) * x, 0);
      ent += mask * entropy / tokens;
      entLoss += weight * mask * entropy;
    }
  }
  return {
    loss: pg - (h.entropyCoeff ?? 0) * entLoss + h.klCoef * kl,
    policyLoss: pg,
    klLoss: kl,
    clipFraction: clip,
    approxKl: approx,
    entropy: ent,
    maxRatio,
    dualClipFraction: dualClipped,
    klClampFraction: klClamped,
  };
}
