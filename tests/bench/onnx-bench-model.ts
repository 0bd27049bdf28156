/**
 * The decoder block stack the ONNX benchmark trains: token embedding, L pre-norm blocks
 * (RMSNorm, causal multi-head attention, GELU MLP, residuals), final norm and a vocabulary
 * projection. Built on the graph IR as a PolicyFn, with its matmul FLOP count.
 */
import {
  add,
  apply,
  defineOp,
  div,
  erf,
  gather,
  lessOrEqual,
  matMul,
  mul,
  reduceMean,
  reshape,
  scalar,
  softmax,
  sqrt,
  sub,
  transpose,
  unsqueeze,
  type Value,
  where,
} from "../../adapters/onnx/mod.ts";
import type { ParamSpec, PolicyFn } from "../../adapters/onnx/train-step/spec.ts";

/** Sizes of the benchmark model. */
export interface DecoderSizes {
  readonly vocab: number;
  readonly dim: number;
  readonly heads: number;
  readonly layers: number;
}

/** Parameter specs, per layer: norms, wq/wk/wv/wo [D,D], w_up [D,4D], w_down [4D,D]. */
export function decoderParams(s: DecoderSizes): ParamSpec[] {
  const d = s.dim;
  const specs: ParamSpec[] = [{ name: "embed", shape: [s.vocab, d] }];
  for (let l = 0; l < s.layers; l++) {
    specs.push(
      { name: `l${l}.norm1`, shape: [d] },
      { name: `l${l}.wq`, shape: [d, d] },
      { name: `l${l}.wk`, shape: [d, d] },
      { name: `l${l}.wv`, shape: [d, d] },
      { name: `l${l}.wo`, shape: [d, d] },
      { name: `l${l}.norm2`, shape: [d] },
      { name: `l${l}.w_up`, shape: [d, 4 * d] },
      { name: `l${l}.w_down`, shape: [4 * d, d] },
    );
  }
  specs.push({ name: "norm_f", shape: [d] }, { name: "unembed", shape: [d, s.vocab] });
  return specs;
}

// CumSum (opset 14) numbers positions for the causal mask; masks carry no gradient.
const CUMSUM = defineOp(
  "CumSum",
  (inputs) => [{ dtype: inputs[0]!.dtype, shape: inputs[0]!.shape }],
);

function rmsNorm(x: Value, gain: Value): Value {
  return mul(div(x, sqrt(add(reduceMean(mul(x, x), [-1], true), 1e-6))), gain);
}

function gelu(x: Value): Value {
  return mul(mul(x, 0.5), add(erf(mul(x, Math.SQRT1_2)), 1));
}

/**
 * The decoder as a PolicyFn: logits [batch, seq, vocab].
 *
 * @example
 * ```ts
 * import { buildTrainStep } from "../../adapters/onnx/train-step/mod.ts";
 * import { decoderParams, decoderPolicy, type DecoderSizes } from "./onnx-bench-model.ts";
 *
 * const sizes: DecoderSizes = { vocab: 96, dim: 32, heads: 2, layers: 2 };
 * buildTrainStep({ policy: decoderPolicy(sizes), params: decoderParams(sizes) }, "fused");
 * ```
 */
export function decoderPolicy(s: DecoderSizes): PolicyFn {
  const dh = s.dim / s.heads;
  return ({ params, tokens, attentionMask }) => {
    const g = tokens.graph;
    // Position t of a row is t (cumsum of ones - 1); key j is visible from query i when j <= i
    // and j is not padding.
    const ones = add(mul(attentionMask, 0), 1);
    const pos = apply(CUMSUM, [ones, scalar(g, 1, "int32")]);
    const visible = lessOrEqual(unsqueeze(pos, [1]), unsqueeze(pos, [2]));
    const keyMask = unsqueeze(attentionMask, [1]);
    const bias = unsqueeze(where(visible, mul(sub(1, keyMask), -1e9), -1e9), [1]);

    const heads = (x: Value) => transpose(reshape(x, ["batch", "seq", s.heads, dh]), [0, 2, 1, 3]);
    let x = gather(params.embed, tokens, 0);
    for (let l = 0; l < s.layers; l++) {
      const p = (n: string) => params[`l${l}.${n}`];
      const h = rmsNorm(x, p("norm1"));
      const q = heads(matMul(h, p("wq")));
      const k = heads(matMul(h, p("wk")));
      const v = heads(matMul(h, p("wv")));
      const scores = add(mul(matMul(q, transpose(k, [0, 1, 3, 2])), 1 / Math.sqrt(dh)), bias);
      const attn = matMul(softmax(scores, -1), v);
      const merged = reshape(transpose(attn, [0, 2, 1, 3]), ["batch", "seq", s.dim]);
      x = add(x, matMul(merged, p("wo")));
      x = add(x, matMul(gelu(matMul(rmsNorm(x, p("norm2")), p("w_up"))), p("w_down")));
    }
    return matMul(rmsNorm(x, params.norm_f), params.unembed);
  };
}

/**
 * Matmul FLOPs of one forward pass over `tokens` = batch * seq positions (2 per multiply-add):
 * projections, MLP, attention scores and mixing, vocabulary projection.
 */
export function decoderForwardFlops(s: DecoderSizes, batch: number, seq: number): number {
  const n = batch * seq;
  const perLayer = 2 * n * (4 * s.dim * s.dim + 8 * s.dim * s.dim) + 4 * batch * seq * seq * s.dim;
  return s.layers * perLayer + 2 * n * s.dim * s.vocab;
}
