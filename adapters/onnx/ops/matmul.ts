/**
 * Matrix products and their VJP rules: MatMul (numpy semantics: batched, broadcast batch dims,
 * 1-D operands promoted and squeezed) and Gemm (2-D, optional transposes, alpha, beta, bias C).
 */
import type { Value } from "../ir.ts";
import { attr } from "../ir.ts";
import type { Dim } from "../shape.ts";
import { broadcastShapes, formatShape } from "../shape.ts";
import { apply, defineOp, expectFloat, fail, sameDType } from "./common.ts";
import { mul } from "./binary.ts";
import { sumToShape } from "./reduce.ts";
import { reshape, reshapeLike, transpose, unsqueeze } from "./shape.ts";

const MATMUL = defineOp("MatMul", (inputs) => {
  const [a, b] = inputs as Value[];
  const dtype = sameDType("MatMul", inputs);
  expectFloat("MatMul", a, inputs);
  if (a.shape.length === 0 || b.shape.length === 0) fail("MatMul", "scalar operand", inputs);
  const as = a.shape.length === 1 ? [1, a.shape[0]] : a.shape;
  const bs = b.shape.length === 1 ? [b.shape[0], 1] : b.shape;
  const k1 = as[as.length - 1];
  const k2 = bs[bs.length - 2];
  if (k1 !== k2) fail("MatMul", `inner dims ${k1} and ${k2} differ`, inputs);
  const batch = broadcastShapes(as.slice(0, -2), bs.slice(0, -2));
  if (typeof batch === "string") fail("MatMul", `batch dims: ${batch}`, inputs);
  const rows: Dim[] = a.shape.length === 1 ? [] : [as[as.length - 2]];
  const cols: Dim[] = b.shape.length === 1 ? [] : [bs[bs.length - 1]];
  return [{ dtype, shape: [...batch, ...rows, ...cols] }];
}, ({ node, grads, needs }) => {
  const g = grads[0]!;
  const [a, b] = node.inputs as Value[];
  if (a.shape.length === 1 && b.shape.length === 1) {
    return [needs[0] ? mul(g, b) : undefined, needs[1] ? mul(g, a) : undefined];
  }
  if (a.shape.length >= 3 && b.shape.length === 2) {
    // Activations [..., M, K] times a shared weight [K, N]: fold the batch into the rows so the
    // weight gradient is one Gemm (no per-batch products summed afterwards).
    const k = a.shape[a.shape.length - 1];
    const n = b.shape[1];
    return [
      needs[0] ? matMul(g, transpose(b)) : undefined,
      needs[1]
        ? gemm(reshape(a, [-1, k]), reshape(g, [-1, n]), undefined, { transA: true })
        : undefined,
    ];
  }
  // Promote 1-D operands (and the gradient) to matrices, then fold and restore their shapes.
  const a2 = a.shape.length === 1 ? unsqueeze(a, [0]) : a;
  const b2 = b.shape.length === 1 ? unsqueeze(b, [1]) : b;
  let g2 = g;
  if (a.shape.length === 1) g2 = unsqueeze(g2, [g2.shape.length - (b.shape.length === 1 ? 0 : 1)]);
  if (b.shape.length === 1) g2 = unsqueeze(g2, [g2.shape.length]);
  const restore = (v: Value, like: Value, like2: Value) => {
    const folded = sumToShape(v, like2.shape);
    return like === like2 ? folded : reshapeLike(folded, like);
  };
  return [
    needs[0] ? restore(matMul(g2, transposeLast(b2)), a, a2) : undefined,
    needs[1] ? restore(matMul(transposeLast(a2), g2), b, b2) : undefined,
  ];
});

function transposeLast(x: Value): Value {
  const r = x.shape.length;
  return transpose(x, [...Array(r - 2).keys(), r - 1, r - 2]);
}

/**
 * Matrix product with numpy semantics (batched, batch dims broadcast).
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { matMul } from "./matmul.ts";
 *
 * declare const h: Value, w: Value;
 * matMul(h, w); // [batch, seq, d] x [d, f] -> [batch, seq, f]
 * ```
 */
export function matMul(a: Value, b: Value): Value {
  return apply(MATMUL, [a, b]);
}

/** Options of Gemm: Y = alpha * op(A) op(B) + beta * C. */
export interface GemmOptions {
  readonly alpha?: number;
  readonly beta?: number;
  readonly transA?: boolean;
  readonly transB?: boolean;
}

const GEMM = defineOp("Gemm", (inputs, attrs) => {
  const [a, b, c] = inputs;
  const dtype = sameDType("Gemm", inputs);
  expectFloat("Gemm", a!, inputs);
  if (a!.shape.length !== 2 || b!.shape.length !== 2) fail("Gemm", "A and B must be 2-D", inputs);
  const [m, k1] = attrs.transA.value ? [a!.shape[1], a!.shape[0]] : a!.shape;
  const [k2, n] = attrs.transB.value ? [b!.shape[1], b!.shape[0]] : b!.shape;
  if (k1 !== k2) fail("Gemm", `inner dims ${k1} and ${k2} differ`, inputs);
  if (c) {
    const out = broadcastShapes(c.shape, [m, n]);
    const ok = typeof out !== "string" && out.length === 2 && out[0] === m && out[1] === n;
    if (!ok) fail("Gemm", `C ${formatShape(c.shape)} does not broadcast to [${m},${n}]`, inputs);
  }
  return [{ dtype, shape: [m, n] }];
}, ({ node, grads, needs }) => {
  const g = grads[0]!;
  const [a, b, c] = node.inputs;
  const alpha = node.attrs.alpha.value as number;
  const beta = node.attrs.beta.value as number;
  const ta = node.attrs.transA.value === 1;
  const tb = node.attrs.transB.value === 1;
  const s = { alpha };
  // dA = alpha g op(B)^T (transposed back when A was), dB = alpha op(A)^T g (likewise).
  const da = ta
    ? gemm(b!, g, undefined, { ...s, transA: tb, transB: true })
    : gemm(g, b!, undefined, { ...s, transB: !tb });
  const db = tb
    ? gemm(g, a!, undefined, { ...s, transA: true, transB: ta })
    : gemm(a!, g, undefined, { ...s, transA: !ta });
  const dc = c && needs[2] ? sumToShape(beta === 1 ? g : mul(g, beta), c.shape) : undefined;
  return [needs[0] ? da : undefined, needs[1] ? db : undefined, dc];
});

/**
 * ONNX Gemm on 2-D operands: alpha * op(A) op(B) + beta * C.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { gemm } from "./matmul.ts";
 *
 * declare const x: Value, w: Value, bias: Value;
 * gemm(x, w, bias, { transB: true });
 * ```
 */
export function gemm(a: Value, b: Value, c?: Value, options: GemmOptions = {}): Value {
  return apply(GEMM, c ? [a, b, c] : [a, b], {
    alpha: attr.float(options.alpha ?? 1),
    beta: attr.float(options.beta ?? 1),
    transA: attr.int(options.transA ? 1 : 0),
    transB: attr.int(options.transB ? 1 : 0),
  });
}
