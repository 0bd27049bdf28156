/**
 * Configuration of a policy-gradient train step and the names of its graph inputs and outputs.
 * The names are the contract between the graph builder, the runner and anyone feeding the graphs
 * by hand; they never change meaning.
 */
import type { AdamConstants, GradNormOrder } from "../optim/mod.ts";
import type { Value } from "../ir.ts";

/**
 * A model parameter: name, static shape and element type (float32 unless it says float16; only
 * frozen parameters may be float16: gradients and Adam state are float32).
 */
export interface ParamSpec {
  readonly name: string;
  readonly shape: readonly number[];
  readonly dtype?: "float32" | "float16";
}

/**
 * How per-token losses become one number, over the whole batch or, with `lossMicroBatch`, over
 * each micro-batch (veRL's agg_loss, core_algos.py lines 790-823, under its names):
 * - `token-mean`: sum over all loss tokens / number of loss tokens.
 * - `seq-mean-token-sum`: each sequence's token sum, then mean over sequences.
 * - `seq-mean-token-mean`: mean over tokens within each sequence, then mean over sequences.
 * - `seq-mean-token-sum-norm`: the sum of the sequences' token sums / a constant (veRL divides by
 *   the padded response length; here the constant, the maximum response length), not by the
 *   number of sequences.
 * - `seq-sum-const` (Dr. GRPO as TRL computes it): each sequence's token sum / a constant, then
 *   mean over sequences, i.e. sum / (sequences * constant), TRL GRPOTrainer's loss_type "dr_grpo"
 *   (`(per_token_loss * mask).sum() / (batch size * max_completion_length)`).
 * Sequences are those with at least one loss token.
 */
export type LossAggregation =
  | "token-mean"
  | "seq-mean-token-sum"
  | "seq-mean-token-mean"
  | "seq-mean-token-sum-norm"
  | "seq-sum-const";

/**
 * KL-to-reference estimator per token, with d = ref - logp (Schulman, "Approximating KL"):
 * k1 = -d, k3 = exp(d) - d - 1.
 */
export type KlEstimator = "k1" | "k3";

/**
 * What the step minimizes:
 * - `clipped`: the clipped policy objective over the ratio to the old logprobs (PPO, GRPO);
 * - `likelihood`: the advantage-weighted negative log-likelihood, -A log p, with the same weights
 *   and denominators. Its gradient is the clipped objective's at ratio 1 (the first update on a
 *   batch sampled by the current weights), so it needs no old logprobs and no forward to make
 *   them: with advantages 1 on the loss tokens it is next-token NLL, supervised training.
 */
export type TrainObjective = "clipped" | "likelihood";

/**
 * A dropout mask the policy multiplies into one of its values during training: a float32 graph
 * input [batch, seq, width] named `IO.dropoutMask(name)`, fed per (micro-)batch by the caller's
 * `DropoutMaskFill` (the randomness is the caller's, keyed so replay is bit-exact).
 */
export interface DropoutMaskSpec {
  readonly name: string;
  readonly width: number;
}

/** What the policy builder receives: every parameter (trainable or frozen) and the batch. */
export interface PolicyInputs {
  readonly params: Readonly<Record<string, Value>>;
  /** int32 [batch, seq]. */
  readonly tokens: Value;
  /** float32 [batch, seq], 1 for real tokens and 0 for padding. */
  readonly attentionMask: Value;
  /**
   * The config's dropout masks by name, float32 [batch, seq, width], in the graphs that train
   * (fused, accumulate); absent in `logprobs`, which runs without dropout.
   */
  readonly dropoutMasks?: Readonly<Record<string, Value>>;
}

/** Builds logits float32 [batch, seq, vocab] on the graph; the model plugs in here. */
export type PolicyFn = (inputs: PolicyInputs) => Value;

/** Everything that fixes the structure of the train-step graphs. */
export interface TrainStepConfig {
  readonly policy: PolicyFn;
  readonly params: readonly ParamSpec[];
  /** Parameters that get gradients and Adam state; the rest are frozen inputs. Default "all". */
  readonly trainable?: "all" | readonly string[];
  /** Default "clipped". */
  readonly objective?: TrainObjective;
  /** Default "token-mean". */
  readonly aggregation?: LossAggregation;
  /**
   * The constant of `seq-sum-const` and `seq-mean-token-sum-norm` (the maximum response length).
   */
  readonly aggregationConstant?: number;
  /**
   * Rows per loss micro-batch, veRL's ppo_micro_batch_size_per_gpu: the loss is aggregated over
   * each run of this many consecutive rows and scaled by 1 / (rows // lossMicroBatch), as veRL's
   * actor accumulates gradients (dp_actor.py lines 351-360, 428). Absent (default): the whole
   * batch is aggregated at once. Either way a runner's own micro-batches (memory) change nothing.
   */
  readonly lossMicroBatch?: number;
  /** KL penalty estimator; null (default) builds no reference-logprob input. */
  readonly kl?: KlEstimator | null;
  /**
   * Dual-clip PPO's bound c > 1 on negative-advantage tokens: their loss is at most -A * c
   * (veRL's clip_ratio_c, default 3); null (default) builds no dual clip.
   */
  readonly dualClip?: number | null;
  /** The k3 KL estimate per token is clamped to [-c, c] (veRL clamps to 10); null (default) not. */
  readonly klClamp?: number | null;
  /** The loss subtracts this times the aggregated entropy (veRL's entropy_coeff); default 0. */
  readonly entropyCoeff?: number;
  /** Adam beta1, beta2, eps (torch defaults). */
  readonly adam?: AdamConstants;
  /** Dropout masks of the training forward (LoRA dropout); none (default) builds no mask input. */
  readonly dropoutMasks?: readonly DropoutMaskSpec[];
  /**
   * How the global gradient norm (clipping, the metrics) sums its squares: "per-tensor" (default)
   * tensor by tensor in parameter order, three nodes each (about 1,000 at the 0.5B shape's 336
   * LoRA tensors, in each of accumulate and apply); "stacked" one reduction per stacked row group
   * that the optimizer builds anyway (three for LoRA). Another summation order, so a run's norms
   * and updates differ in the low bits: a recorded choice (runtime.fused_ops' grad_norm).
   */
  readonly gradNorm?: GradNormOrder;
}

/** A train-step configuration could not be used; the message names the field and the fix. */
export class TrainStepError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TrainStepError";
  }
}

/** Graph input and output names. Per-parameter names append `:<param name>`. */
export const IO = Object.freeze({
  tokens: "tokens",
  targets: "targets",
  attentionMask: "attention_mask",
  lossMask: "loss_mask",
  advantages: "advantages",
  oldLogprobs: "old_logprobs",
  /** float scalar: logits are divided by it before every softmax (see logprobTemperature). */
  temperature: "temperature",
  refLogprobs: "ref_logprobs",
  /** float scalar: denominator of the aggregated loss over the WHOLE batch (see lossDenominator). */
  lossDenominator: "loss_denominator",
  /** float32 [batch]: each row's denominator, in place of lossDenominator with lossMicroBatch. */
  rowDenominators: "row_denominators",
  /** float scalar: loss tokens in the WHOLE batch; metrics are divided by it. */
  tokenCount: "token_count",
  /** float scalar: 0 starts a new gradient accumulation, 1 adds to the running one. */
  accumulate: "accumulate",
  clipLow: "clip_eps_low",
  clipHigh: "clip_eps_high",
  klCoef: "kl_coef",
  lr: "lr",
  weightDecay: "weight_decay",
  maxGradNorm: "max_grad_norm",
  adamStep: "adam_step",
  adamStepNext: "adam_step_next",
  /** float scalar: updates applied so far, this step's included (adam_step_next, to the host). */
  appliedSteps: "applied_steps",
  loss: "loss",
  policyLoss: "policy_loss",
  klLoss: "kl_loss",
  clipFraction: "clip_fraction",
  approxKl: "approx_kl",
  entropy: "entropy",
  /** Largest ratio new / old policy over the loss tokens (with a dual clip). */
  maxRatio: "max_ratio",
  /** Fraction of loss tokens whose loss the dual clip capped (with a dual clip). */
  dualClipFraction: "dual_clip_fraction",
  /** Fraction of loss tokens whose k3 KL estimate was clamped (with a KL clamp). */
  klClampFraction: "kl_clamp_fraction",
  gradNorm: "grad_norm",
  skipped: "skipped",
  /** float32 [batch, seq]: log p(target) of the `logprobs` graph. */
  logprobs: "logprobs",
  dropoutMask: (name: string) => `dropout_mask:${name}`,
  param: (name: string) => `param:${name}`,
  paramNext: (name: string) => `param_next:${name}`,
  adamM: (name: string) => `adam_m:${name}`,
  adamMNext: (name: string) => `adam_m_next:${name}`,
  adamV: (name: string) => `adam_v:${name}`,
  adamVNext: (name: string) => `adam_v_next:${name}`,
  /**
   * The running gradient sum of one group of same-layout trainable parameters, stacked along
   * axis 0 in parameter order (optim/row-groups.ts); TrainStepGraph.gradientSums lists them.
   */
  gradSum: (group: number) => `grad_sum:${group}`,
  gradSumNext: (group: number) => `grad_sum_next:${group}`,
});

/** The loss metrics every step reports (host scalars). */
export const LOSS_METRICS = [
  IO.loss,
  IO.policyLoss,
  IO.klLoss,
  IO.clipFraction,
  IO.approxKl,
  IO.entropy,
] as const;

/**
 * Names of the trainable parameters, checked against the parameter list.
 *
 * @example
 * ```ts
 * import { trainableNames, type TrainStepConfig } from "./spec.ts";
 *
 * declare const config: TrainStepConfig;
 * trainableNames({ ...config, trainable: ["lora_a", "lora_b"] });
 * ```
 */
export function trainableNames(config: TrainStepConfig): readonly string[] {
  const all = config.params.map((p) => p.name);
  const seen = new Set<string>();
  for (const name of all) {
    if (seen.has(name)) throw new TrainStepError(`params lists ${name} twice`);
    seen.add(name);
  }
  if (config.trainable === undefined || config.trainable === "all") {
    return checkFloat32(config, all);
  }
  for (const name of config.trainable) {
    if (!seen.has(name)) {
      throw new TrainStepError(`trainable names ${name}, which is not a param; params: ${all}`);
    }
  }
  if (config.trainable.length === 0) {
    throw new TrainStepError('trainable is empty; name at least one param or use "all"');
  }
  const names = all.filter((name) => config.trainable!.includes(name));
  return checkFloat32(config, names);
}

/** Trainable parameters must be float32 (a float16 one would train with float16 Adam state). */
function checkFloat32(config: TrainStepConfig, trainable: string[]): string[] {
  const half = config.params.find((p) => p.dtype === "float16" && trainable.includes(p.name));
  if (half) {
    throw new TrainStepError(
      `${half.name} is float16 and trainable; only frozen parameters may be float16 ` +
        "(train LoRA on a float16 base, or keep the base float32 for full fine-tuning)",
    );
  }
  return trainable;
}

/**
 * The temperature the logprobs of a policy sampled at `sampling` are taken at: the policy that
 * sampled is softmax(logits / T) (veRL's dp_actor._forward_micro_batch `logits.div_(temperature)`,
 * TRL's GRPOTrainer._get_per_token_logps_and_entropies `logits.div_(self.temperature)`), so T
 * itself. T = 0 samples greedily (the argmax), which has no tempered distribution to take
 * logprobs of; they are then those of the model itself, T = 1.
 *
 * @example
 * ```ts
 * import { logprobTemperature } from "./spec.ts";
 *
 * logprobTemperature(0.7); // 0.7
 * logprobTemperature(0); // 1
 * ```
 */
export function logprobTemperature(sampling: number): number {
  if (!(Number.isFinite(sampling) && sampling >= 0)) {
    throw new TrainStepError(
      `temperature must be a finite number >= 0 (the sampling temperature), got ${sampling}`,
    );
  }
  return sampling === 0 ? 1 : sampling;
}
