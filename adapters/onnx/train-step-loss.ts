/**
 * The clipped policy objective (PPO, GRPO, DAPO's asymmetric clip) on logits, with an optional
 * KL penalty to a reference policy, plus the diagnostics every step reports. Per-token values are
 * weighted so that summing a micro-batch's contribution over all micro-batches gives the loss of
 * the whole batch: the denominators are inputs computed over the whole batch. Every distribution
 * here (ratio, KL, entropy) is the tempered one the rollout sampled from, softmax(logits / T).
 */
import {
  add,
  castTo,
  clip,
  div,
  exp,
  gatherElements,
  greater,
  logSoftmax,
  max,
  mul,
  neg,
  reduceSum,
  scalar,
  squeeze,
  sub,
  unsqueeze,
  type Value,
} from "./mod.ts";
import {
  type KlEstimator,
  type LossAggregation,
  type TrainObjective,
  TrainStepError,
} from "./train-step-spec.ts";

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
 * const out = policyObjective(inputs, "token-mean", "k3");
 * const grads = gradients(g, out.loss, params);
 */
export function policyObjective(
  x: ObjectiveInputs,
  aggregation: LossAggregation,
  kl: KlEstimator | null,
  objective: TrainObjective = "clipped",
): ObjectiveOutputs {
  const logpAll = temperedLogSoftmax(x.logits, x.temperature);
  const logp = targetLogprobs(logpAll, x.targets);
  const zero = () => scalar(x.logits.graph, 0, "float32");
  const tokenMean = (v: Value) => div(reduceSum(mul(v, x.lossMask)), x.tokenCount);
  let perToken: Value;
  let ratioTerms: { readonly unclipped: Value; readonly clipped: Value } | null = null;
  if (objective === "likelihood") {
    perToken = mul(neg(x.advantages), logp);
  } else {
    const ratio = exp(sub(logp, x.oldLogprobs));
    const unclipped = mul(neg(x.advantages), ratio);
    const clipped = mul(neg(x.advantages), clip(ratio, sub(1, x.clipLow), add(x.clipHigh, 1)));
    perToken = max(unclipped, clipped);
    ratioTerms = { unclipped, clipped };
  }

  // token-mean and seq-sum-const differ only in the denominator the host feeds.
  const seqWeight = aggregation === "seq-mean-token-mean"
    ? div(x.lossMask, max(reduceSum(x.lossMask, [1], true), 1))
    : x.lossMask;
  const weight = div(seqWeight, x.lossDenominator);
  const policyLoss = reduceSum(mul(perToken, weight));

  let klLoss = zero();
  if (kl !== null) {
    if (!x.refLogprobs) throw new TrainStepError(`kl estimator ${kl} needs refLogprobs`);
    const d = sub(x.refLogprobs, logp);
    const perTokenKl = kl === "k1" ? neg(d) : sub(sub(exp(d), d), 1);
    klLoss = reduceSum(mul(perTokenKl, weight));
  }
  const loss = kl === null ? policyLoss : add(policyLoss, mul(x.klCoef, klLoss));

  const entropyPerToken = neg(reduceSum(mul(exp(logpAll), logpAll), [-1]));
  return {
    loss,
    policyLoss,
    klLoss,
    clipFraction: ratioTerms === null
      ? zero()
      : tokenMean(castTo(greater(ratioTerms.clipped, ratioTerms.unclipped), "float32")),
    approxKl: ratioTerms === null ? zero() : tokenMean(sub(x.oldLogprobs, logp)),
    entropy: tokenMean(entropyPerToken),
  };
}
