/**
 * Rotary position embedding in one node, onnxruntime's `RotaryEmbedding` (com.microsoft, with
 * kernels on its CPU, WebAssembly and WebGPU providers), in HF's rotate-half layout: each head's
 * halves x1, x2 become (x1 cos - x2 sin, x2 cos + x1 sin). One dispatch where the composed form
 * (Split, four Mul, Sub, Add, Concat) takes eight; with the reshapes around it, four nodes in all.
 *
 * The op looks its cos and sin up by position id; here every token is its own row: x is taken as
 * one sequence of all tokens ([1, tokens, heads * headDim]) with position ids starting at 0 (the op's
 * one-element offset form), so token i reads row i of `cos` and `sin` [tokens, headDim / 2], the
 * tables the caller computed for that token's position. No table of every position is needed, and
 * the angles are the composed form's.
 *
 * Gradient: the rotation is orthogonal, so dx is dy rotated back, by the same op with sin negated.
 */
import { attr, type Value } from "../ir.ts";
import { apply, defineOp, expectFloat, fail, int64s } from "./common.ts";
import { neg } from "./unary.ts";

const OP = "RotaryEmbedding";

const ROTARY_EMBEDDING = Object.freeze({
  ...defineOp(OP, (inputs) => {
    const [x, , cos, sin] = inputs as readonly Value[];
    expectFloat(OP, x, inputs);
    if (x.shape.length !== 3 || x.shape[0] !== 1) {
      fail(OP, "x must be [1, tokens, heads * headDim]", inputs);
    }
    if (cos.shape.length !== 2 || sin.shape.length !== 2 || cos.dtype !== x.dtype) {
      fail(OP, "cos and sin must be [tokens, headDim / 2] of x's dtype", inputs);
    }
    return [{ dtype: x.dtype, shape: x.shape }];
  }, ({ node, grads, needs }) => {
    const [x, , cos, sin] = node.inputs as readonly Value[];
    if (needs[2] || needs[3]) fail(OP, "no gradient flows to its cos and sin tables", [x]);
    const [dy] = grads;
    const heads = node.attrs.num_heads;
    if (heads?.type !== "int") fail(OP, "lacks its num_heads", [x]);
    const dx = dy !== undefined && needs[0]
      ? rotaryEmbedding(dy, cos, neg(sin), heads.value)
      : undefined;
    return [dx, undefined, undefined, undefined];
  }),
  domain: "com.microsoft",
});

/**
 * Rotates every head of every token of x [1, tokens, heads * headDim] by its row of `cos` and
 * `sin` [tokens, headDim / 2] (rotate-half layout).
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { reshape } from "./shape.ts";
 * import { rotaryEmbedding } from "./rotary.ts";
 *
 * declare const q: Value; // float32 [batch, seq, 14, 64]
 * declare const cos: Value; // float32 [batch * seq, 32]: cos(position * inverse frequency)
 * declare const sin: Value; // the same with sin
 * const rotated = rotaryEmbedding(reshape(q, [1, -1, 14 * 64]), cos, sin, 14);
 * ```
 */
export function rotaryEmbedding(x: Value, cos: Value, sin: Value, heads: number): Value {
  return apply(ROTARY_EMBEDDING, [x, int64s(x.graph, [0]), cos, sin], {
    interleaved: attr.int(0),
    num_heads: attr.int(heads),
  });
}
