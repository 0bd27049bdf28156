/**
 * The clipped policy objective (PPO, GRPO, DAPO's asymmetric clip, dual-clip PPO) on logits, with
 * an optional KL penalty to a reference policy and entropy bonus, plus the diagnostics every step
 * reports. Per-token values are
 * weighted so that summing a micro-batch's contribution over all micro-batches gives the loss of
 * the whole batch: the denominators are inputs computed over the whole batch. Every distribution
 * here (ratio, KL, entropy) is the tempered one the rollout sampled from, softmax(logits / T).
 */
import type { Value } from "../ir.ts";
import { add, div, greater, less, max, min, mul, sub } from "../ops/binary.ts";
import { castTo, scalar } from "../ops/common.ts";
import { gatherElements } from "../ops/gather.ts";
import { logSoftmax, reduceMax, reduceSum } from "../ops/reduce.ts";
import { clip, where } from "../ops/select.ts";
import { squeeze, unsqueeze } from "../ops/shape.ts";
import { exp, neg } from "../ops/unary.ts";
import { type TrainStepConfig, TrainStepError } from "./spec.ts";

/** The settings of a train step that shape its loss (defaults as TrainStepConfig says). */
export type LossTerms = Pick<
  TrainStepConfig,
  "objective" | "aggregation" | "kl" | "dualClip" | "klClamp" | "entropyCoeff"
>;

/** Graph values the objective reads. Per-token tensors are float32 [batch, seq]. */
export interface ObjectiveInputs {
  /** float32 [batch, seq, vocab]. */
  readonly logits: Value;
  /** int32 [batch, seq]: the token each position predicts. */
  readonly targets: Value;
  readonly lossMask: Value;
  readonly advantages: Value;
  readonly oldLogprobs: Value;
  readonly refLogprobs?: Value;
  readonly lossDenominator: Value;
  readonly tokenCount: Value;
  readonly clipLow: Value;
  readonly clipHigh: Value;
  readonly klCoef: Value;
  /** float scalar: the logprob temperature (`logprobTemperature` of the sampling one). */
  readonly temperature: Value;
}

/** Scalars of the objective; all but `loss` are diagnostics that carry no gradient. */
export interface ObjectiveOutputs {
  readonly loss: Value;
  readonly policyLoss: Value;
  readonly klLoss: Value;
  readonly clipFraction: Value;
  /** Token mean of old_logprob - logprob (the k1 estimate of KL(old || new)). */
  readonly approxKl: Value;
  /** Token mean of the policy's entropy at each position. */
  readonly entropy: Value;
  /** With a dual clip: the largest ratio new / old over the loss tokens. */
  readonly maxRatio?: Value;
  /** With a dual clip: the fraction of loss tokens whose loss it capped. */
  readonly dualClipFraction?: Value;
  /** With a KL clamp (and the k3 estimator): the fraction of loss tokens it clamped. */
  readonly klClampFraction?: Value;
}

/**
 * log softmax(logits / T) over the vocabulary, [batch, seq, vocab]: the log-policy that sampled at
 * temperature T (veRL dp_actor._forward_micro_batch divides the logits by the temperature before
 * logprobs and entropy alike). T = 1 divides exactly, so the untempered case is bit-identical.
 */
export function temperedLogSoftmax(logits: Value, temperature: Value): Value {
  return logSoftmax(div(logits, temperature), -1);
}

/** log p(target) [batch, seq] picked from log-probabilities [batch, seq, vocab]. */
export function targetLogprobs(logpAll: Value, targets: Value): Value {
  return squeeze(gatherElements(logpAll, unsqueeze(targets, [2]), 2), [2]);
}

/**
 * Emits the objective. Values at masked positions must be finite (they are multiplied by 0).
 * The `likelihood` objective reads neither the old logprobs nor the clip range (see
 * TrainObjective): its clip fraction and approximate KL are 0, as the clipped objective's are at
 * ratio 1.
 *
 * @example
 * ```ts
 * import { gradients } from "../autodiff.ts";
 * import type { Graph, Value } from "../ir.ts";
 * import { type ObjectiveInputs, policyObjective } from "./loss.ts";
 *
 * declare const g: Graph;
 * declare const inputs: ObjectiveInputs;
 * declare const params: Value[];
 * const out = policyObjective(inputs, { aggregation: "token-mean", kl: "k3", dualClip: 3 });
 * const grads = gradients(g, out.loss, params);
 * ```
 */
export function policyObjective(x: ObjectiveInputs, terms: LossTerms): ObjectiveOutputs {
  const aggregation = terms.aggregation ?? "token-mean";
  const kl = terms.kl ?? null;
  const logpAll = temperedLogSoftmax(x.logits, x.temperature);
  const logp = targetLogprobs(logpAll, x.targets);
  const zero = () => scalar(x.logits.graph, 0, "float32");
  const tokenMean = (v: Value) => div(reduceSum(mul(v, x.lossMask)), x.tokenCount);
  let perToken: Value;
  let ratioTerms: { readonly unclipped: Value; readonly clipped: Value } | null = null;
  let dualClipped: { readonly ratio: Value; readonly capped: Value } | null = null;
  if (terms.objective === "likelihood") {
    perToken = mul(neg(x.advantages), logp);
  } else {
    const ratio = exp(sub(logp, x.oldLogprobs));
    const unclipped = mul(neg(x.advantages), ratio);
    const clipped = mul(neg(x.advantages), clip(ratio, sub(1, x.clipLow), add(x.clipHigh, 1)));
    perToken = max(unclipped, clipped);
    ratioTerms = { unclipped, clipped };
    if (terms.dualClip != null) {
      const capped = dualClip(perToken, x.advantages, terms.dualClip);
      dualClipped = { ratio, capped: greater(perToken, capped) };
      perToken = capped;
    }
  }

  // Only seq-mean-token-mean weighs a token by its sequence's length; the others differ in the
  // denominator the host feeds (lossDenominator, or rowDenominators per loss micro-batch).
  const seqWeight = aggregation === "seq-mean-token-mean"
    ? div(x.lossMask, max(reduceSum(x.lossMask, [1], true), 1))
    : x.lossMask;
  const weight = div(seqWeight, x.lossDenominator);
  const policyLoss = reduceSum(mul(perToken, weight));

  let klLoss = zero();
  let klClampFraction: Value | undefined;
  if (kl !== null) {
    if (!x.refLogprobs) throw new TrainStepError(`kl estimator ${kl} needs refLogprobs`);
    const d = sub(x.refLogprobs, logp);
    let perTokenKl = kl === "k1" ? neg(d) : sub(sub(exp(d), d), 1);
    if (kl === "k3" && terms.klClamp != null) {
      // veRL core_algos.py kl_penalty lines 965-969 clamp low_var_kl (k3) to [-10, 10]: a token
      // the policy has moved far from the reference adds at most the bound, with no gradient.
      if (!(terms.klClamp > 0)) {
        throw new TrainStepError(`klClamp must be > 0, got ${terms.klClamp}`);
      }
      klClampFraction = tokenMean(castTo(greater(perTokenKl, terms.klClamp), "float32"));
      perTokenKl = clip(perTokenKl, -terms.klClamp, terms.klClamp);
    }
    klLoss = reduceSum(mul(perTokenKl, weight));
  }

  const entropyPerToken = neg(reduceSum(mul(exp(logpAll), logpAll), [-1]));
  // veRL dp_actor.py lines 406-410: policy_loss = pg_loss - agg_loss(entropy) * entropy_coeff,
  // the entropy aggregated as the policy loss is; the KL term is added after (line 420).
  const entropyCoeff = terms.entropyCoeff ?? 0;
  const withEntropy = entropyCoeff === 0
    ? policyLoss
    : sub(policyLoss, mul(entropyCoeff, reduceSum(mul(entropyPerToken, weight))));
  const loss = kl === null ? withEntropy : add(withEntropy, mul(x.klCoef, klLoss));
  return {
    loss,
    policyLoss,
    klLoss,
    clipFraction: ratioTerms === null
      ? zero()
      : tokenMean(castTo(greater(ratioTerms.clipped, ratioTerms.unclipped), "float32")),
    approxKl: ratioTerms === null ? zero() : tokenMean(sub(x.oldLogprobs, logp)),
    entropy: tokenMean(entropyPerToken),
    ...(dualClipped && {
      maxRatio: reduceMax(mul(dualClipped.ratio, x.lossMask)),
      dualClipFraction: tokenMean(castTo(dualClipped.capped, "float32")),
    }),
    ...(klClampFraction && { klClampFraction }),
  };
}

/**
 * Dual-clip PPO (Ye et al. 2020, arXiv:1912.09729; veRL core_algos.py compute_policy_loss lines
 * 880-885): where A < 0 the clipped loss is capped at -A * c. A token whose ratio has grown past
 * c (the new policy favours a token the advantage says to avoid, e.g. a stale or off-policy
 * sample) then adds -A * c with no gradient, instead of a loss and gradient that grow with the
 * ratio. Where A >= 0 the loss is unchanged.
 */
function dualClip(perToken: Value, advantages: Value, c: number): Value {
  if (!(c > 1)) throw new TrainStepError(`dualClip must be > 1 (veRL asserts it), got ${c}`);
  return where(less(advantages, 0), min(perToken, mul(neg(advantages), c)), perToken);
}
