/**
 * A small policy for the train-step tests: embedding -> tanh MLP (with an optional LoRA pair on
 * the hidden projection, whose input takes the dropout mask `TINY_LORA_MASK` when the step feeds
 * one) -> logits, built on the graph IR, with a float64 TypeScript forward pass of the same
 * function for reference checks.
 */
import { add, gather, matMul, mul, tanh, unsqueeze } from "../../adapters/onnx/mod.ts";
import type { ParamSpec, PolicyFn } from "../../adapters/onnx/train-step/spec.ts";
import type { PolicyBatch } from "../../adapters/onnx/train-step/batch.ts";
import type { TrainStepHyper } from "../../adapters/onnx/train-step/runner.ts";
import { type HostTensor, hostTensor } from "../../adapters/onnx/runtime/mod.ts";

/** Sizes of the tiny policy. */
export interface TinySizes {
  readonly vocab: number;
  readonly dim: number;
  readonly hidden: number;
  /** LoRA rank; 0 builds no adapter. */
  readonly rank: number;
}

/** Name of the tiny policy's one dropout mask, on the LoRA branch input, [batch, seq, dim]. */
export const TINY_LORA_MASK = "lora";

/** Parameter specs: embed [V,D], w1 [D,H], b1 [H], w2 [H,V], b2 [V] (+ lora_a [D,r], lora_b [r,H]). */
export function tinyParams(s: TinySizes): ParamSpec[] {
  const specs: ParamSpec[] = [
    { name: "embed", shape: [s.vocab, s.dim] },
    { name: "w1", shape: [s.dim, s.hidden] },
    { name: "b1", shape: [s.hidden] },
    { name: "w2", shape: [s.hidden, s.vocab] },
    { name: "b2", shape: [s.vocab] },
  ];
  if (s.rank > 0) {
    specs.push({ name: "lora_a", shape: [s.dim, s.rank] }, {
      name: "lora_b",
      shape: [s.rank, s.hidden],
    });
  }
  return specs;
}

/**
 * The graph policy: logits = tanh(h W1 (+ (h * dropout) A B) + b1) W2 + b2 with
 * h = E[tokens] * attention mask.
 */
export function tinyPolicy(s: TinySizes): PolicyFn {
  return ({ params, tokens, attentionMask, dropoutMasks }) => {
    const h = mul(gather(params.embed, tokens, 0), unsqueeze(attentionMask, [2]));
    let pre = matMul(h, params.w1);
    if (s.rank > 0) {
      const mask = dropoutMasks?.[TINY_LORA_MASK];
      const branch = mask ? mul(h, mask) : h;
      pre = add(pre, matMul(matMul(branch, params.lora_a), params.lora_b));
    }
    return add(matMul(tanh(add(pre, params.b1)), params.w2), params.b2);
  };
}

/** A deterministic pseudo-random stream (xorshift32) for test data. */
export function stream(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

/** Initial weights, uniform in [-scale, scale]. */
export function tinyWeights(s: TinySizes, seed: number, scale = 0.5): Record<string, HostTensor> {
  const next = stream(seed);
  const out: Record<string, HostTensor> = {};
  for (const p of tinyParams(s)) {
    const n = p.shape.reduce((a, b) => a * b, 1);
    out[p.name] = hostTensor(
      "float32",
      p.shape,
      Float32Array.from({ length: n }, () => (next() * 2 - 1) * scale),
    );
  }
  return out;
}

/**
 * A batch with ragged lengths (padding at the end of rows), loss on all but the prompt's first
 * two positions, mixed-sign advantages, and old/ref logprobs near the policy's own.
 */
export function tinyBatch(s: TinySizes, batch: number, seq: number, seed: number): PolicyBatch {
  const next = stream(seed);
  const n = batch * seq;
  const tokens = new Int32Array(n), targets = new Int32Array(n);
  const attentionMask = new Float32Array(n), lossMask = new Float32Array(n);
  const advantages = new Float32Array(n), oldLogprobs = new Float32Array(n);
  const refLogprobs = new Float32Array(n);
  for (let b = 0; b < batch; b++) {
    const len = seq - (b % 3);
    const adv = next() * 2 - 1;
    for (let t = 0; t < seq; t++) {
      const i = b * seq + t;
      tokens[i] = Math.floor(next() * s.vocab);
      targets[i] = Math.floor(next() * s.vocab);
      attentionMask[i] = t < len ? 1 : 0;
      lossMask[i] = t >= 2 && t < len ? 1 : 0;
      advantages[i] = adv;
      oldLogprobs[i] = -Math.log(s.vocab) + (next() - 0.5) * 0.8;
      refLogprobs[i] = -Math.log(s.vocab) + (next() - 0.5) * 0.8;
    }
  }
  return {
    batch,
    seq,
    tokens,
    targets,
    attentionMask,
    lossMask,
    advantages,
    oldLogprobs,
    refLogprobs,
  };
}

/** Float64 forward pass of tinyPolicy: logits [B][T][V]; `dropout` is the mask [B*T*D]. */
export function tinyLogits(
  s: TinySizes,
  w: Readonly<Record<string, ArrayLike<number>>>,
  b: PolicyBatch,
  dropout?: ArrayLike<number>,
): number[][][] {
  const out: number[][][] = [];
  for (let i = 0; i < b.batch; i++) {
    const row: number[][] = [];
    for (let t = 0; t < b.seq; t++) {
      const tok = b.tokens[i * b.seq + t];
      const m = b.attentionMask[i * b.seq + t];
      const h = Array.from({ length: s.dim }, (_, d) => w.embed[tok * s.dim + d] * m);
      const hidden = Array.from({ length: s.hidden }, (_, k) => {
        let acc = w.b1[k];
        for (let d = 0; d < s.dim; d++) acc += h[d] * w.w1[d * s.hidden + k];
        if (s.rank > 0) {
          for (let r = 0; r < s.rank; r++) {
            let ha = 0;
            for (let d = 0; d < s.dim; d++) {
              const keep = dropout ? dropout[(i * b.seq + t) * s.dim + d] : 1;
              ha += h[d] * keep * w.lora_a[d * s.rank + r];
            }
            acc += ha * w.lora_b[r * s.hidden + k];
          }
        }
        return Math.tanh(acc);
      });
      row.push(Array.from({ length: s.vocab }, (_, v) => {
        let acc = w.b2[v];
        for (let k = 0; k < s.hidden; k++) acc += hidden[k] * w.w2[k * s.vocab + v];
        return acc;
      }));
    }
    out.push(row);
  }
  return out;
}

/** The batch's per-token arrays as [B][T] rows, the form the float64 reference takes. */
export function rows(b: PolicyBatch, a: ArrayLike<number>): number[][] {
  return Array.from(
    { length: b.batch },
    (_, i) => Array.from({ length: b.seq }, (_, t) => a[i * b.seq + t]),
  );
}

/**
 * A plain step's hyperparameters at learning rate `lr`: the default clip range (0.2, 0.28), no KL,
 * weight decay 0.01, gradients clipped at norm 1, temperature 1.
 *
 * @example
 * ```ts
 * import { plainHyper } from "./tiny-policy.ts";
 *
 * plainHyper(1e-2).clipHigh; // 0.28
 * ```
 */
export function plainHyper(lr: number): TrainStepHyper {
  return {
    lr,
    clipLow: 0.2,
    clipHigh: 0.28,
    klCoef: 0,
    weightDecay: 0.01,
    maxGradNorm: 1,
    temperature: 1,
  };
}
