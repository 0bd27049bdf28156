/**
 * Next-token (cross-entropy) training through the policy train step, so pretraining and RL share
 * one graph builder and one optimizer: the step's `likelihood` objective with advantage 1 on
 * every loss token is the mean negative log-likelihood, whose gradient is the clipped objective's
 * at ratio 1. One run per step: forward, backward and AdamW, the loss read on the way.
 */
import type { HostTensor, Runtime } from "../onnx/runtime/mod.ts";
import { openTrainStep, type PolicyBatch, type TrainStepRunner } from "../onnx/train-step/mod.ts";
import { ModelError } from "./errors.ts";
import { trainStepConfig } from "./graphs.ts";
import type { DecoderSpec } from "./parameters.ts";
import { type ParamFeeds, runnerFeeds } from "./weights.ts";

/**
 * One training sequence: the model learns tokens[t] for every t in a span [from, to) of
 * `lossSpans` (1 <= from < to <= tokens.length); a packed row has one span per answer.
 */
export interface SupervisedExample {
  readonly tokens: readonly number[];
  readonly lossSpans: readonly (readonly [number, number])[];
}

/** Optimizer settings of one step. */
export interface SupervisedHyper {
  readonly lr: number;
  readonly weightDecay: number;
  /** Clip threshold of the global gradient norm (+Infinity: none). */
  readonly maxGradNorm: number;
}

/** What one step reports. */
export interface SupervisedMetrics {
  /** Mean negative log-likelihood of the loss tokens before the update (nats/token). */
  readonly loss: number;
  readonly gradNorm: number;
  readonly skipped: boolean;
  readonly lossTokens: number;
}

/** A loaded supervised trainer; parameters live in the train step's device state. */
export interface SupervisedTrainer {
  readonly runner: TrainStepRunner;
  step(examples: readonly SupervisedExample[], hyper: SupervisedHyper): Promise<SupervisedMetrics>;
  /** Current parameters as graph feeds (for generation or evaluation between steps). */
  feeds(): ParamFeeds;
  release(): Promise<void>;
}

/**
 * Right-pads examples into a policy batch (tokens shifted into targets; pad id 0, masked).
 *
 * @example
 * ```ts
 * import { supervisedBatch } from "./supervised.ts";
 *
 * supervisedBatch([{ tokens: [1, 2, 3], lossSpans: [[2, 3]] }]).lossMask; // [0, 1]
 * ```
 */
export function supervisedBatch(examples: readonly SupervisedExample[]): PolicyBatch {
  const seq = Math.max(...examples.map((e) => e.tokens.length)) - 1;
  const n = examples.length * seq;
  const tokens = new Int32Array(n);
  const targets = new Int32Array(n);
  const attentionMask = new Float32Array(n);
  const lossMask = new Float32Array(n);
  examples.forEach((e, r) => {
    const bad = e.lossSpans.find(([from, to]) =>
      !(from >= 1 && from < to && to <= e.tokens.length)
    );
    if (e.tokens.length < 2 || e.lossSpans.length === 0 || bad) {
      throw new ModelError(
        `examples[${r}]`,
        `needs >= 2 tokens and loss spans [from, to) with 1 <= from < to <= ${e.tokens.length}, ` +
          `got ${JSON.stringify(e.lossSpans)}`,
      );
    }
    const at = r * seq;
    tokens.set(e.tokens.slice(0, -1), at);
    targets.set(e.tokens.slice(1), at);
    attentionMask.fill(1, at, at + e.tokens.length - 1);
    for (const [from, to] of e.lossSpans) lossMask.fill(1, at + from - 1, at + to - 1);
  });
  return {
    batch: examples.length,
    seq,
    tokens,
    targets,
    attentionMask,
    lossMask,
    advantages: Float32Array.from(lossMask),
    oldLogprobs: new Float32Array(n),
  };
}

/**
 * Opens a trainer of every parameter of `spec` (full training; with LoRA, of the adapter on a
 * frozen base), starting from `initial` (host tensors by HF name).
 *
 * @example
 * ```ts
 * import type { HostTensor, Runtime } from "../onnx/runtime/mod.ts";
 * import type { DecoderSpec } from "./parameters.ts";
 * import { openSupervisedTrainer, type SupervisedExample } from "./supervised.ts";
 *
 * declare const runtime: Runtime;
 * declare const spec: DecoderSpec;
 * declare const initial: Record<string, HostTensor>; // by HF name
 * declare const examples: readonly SupervisedExample[];
 * const trainer = await openSupervisedTrainer(runtime, spec, initial);
 * const m = await trainer.step(examples, { lr: 1e-3, weightDecay: 0.01, maxGradNorm: 1 });
 * ```
 */
export async function openSupervisedTrainer(
  runtime: Runtime,
  spec: DecoderSpec,
  initial: Readonly<Record<string, HostTensor>>,
): Promise<SupervisedTrainer> {
  const runner = await openTrainStep({
    runtime,
    // Step after step at one shape, or near it (pretrain packs rows up to one length): the
    // sessions keep the largest step's memory.
    fixedShape: true,
    config: { ...trainStepConfig(spec), objective: "likelihood" },
    initial,
  });
  const feeds = (): ParamFeeds => runnerFeeds(spec, runner);
  return Object.freeze({
    runner,
    feeds,
    step: async (examples: readonly SupervisedExample[], hyper: SupervisedHyper) => {
      const batch = supervisedBatch(examples);
      // Advantages 1 on the loss tokens, token-mean: the step's loss is the mean NLL at the
      // weights before its update; no clip range or KL applies to the likelihood objective.
      const m = await runner.step(batch, {
        ...hyper,
        clipLow: 0,
        clipHigh: 0,
        klCoef: 0,
        temperature: 1,
      });
      return Object.freeze({
        loss: m.loss,
        gradNorm: m.gradNorm,
        skipped: m.skipped,
        lossTokens: m.lossTokens,
      });
    },
    release: () => runner.release(),
  });
}
