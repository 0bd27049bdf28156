/**
 * Reductions and softmax with their VJP rules: ReduceSum, ReduceMean, ReduceMax,
 * ReduceLogSumExp, Softmax, and log-softmax composed as x - ReduceLogSumExp(x) (LogSoftmax runs on
 * the CPU under WebGPU). Also sumToShape, which folds a broadcast gradient back to an input shape.
 */
import type { Value } from "../ir.ts";
import { attr } from "../ir.ts";
import type { Dim, Shape } from "../shape.ts";
import { dimProduct, normalizeAxis } from "../shape.ts";
import {
  apply,
  castTo,
  defineOp,
  expectDType,
  expectFloat,
  fail,
  int64s,
  scalar,
} from "./common.ts";
import { div, equal, mul, sub } from "./binary.ts";
import { exp } from "./unary.ts";
import { concat, expand, shapeOf, unsqueeze } from "./shape.ts";

type ReduceKind = "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceLogSumExp";

function reduceAxes(op: string, x: Value, axes: readonly number[] | undefined): number[] {
  const r = x.shape.length;
  const list = axes ?? x.shape.map((_, i) => i);
  const out = list.map((a) => normalizeAxis(a, r) ?? fail(op, `axis ${a} out of range`, [x]));
  if (new Set(out).size !== out.length) fail(op, `repeated axis in [${list}]`, [x]);
  return out.sort((a, b) => a - b);
}

function reducedShape(shape: Shape, axes: readonly number[], keepdims: boolean): Dim[] {
  return shape.flatMap((d, i) => (axes.includes(i) ? (keepdims ? [1] : []) : [d]));
}

/** A reduce output (or its gradient) with the reduced axes restored as size 1. */
function keptDims(v: Value, axes: readonly number[], keepdims: boolean): Value {
  return keepdims || axes.length === 0 ? v : unsqueeze(v, axes);
}

const REDUCE_PROD = defineOp("ReduceProd", (inputs) => [{ dtype: inputs[0]!.dtype, shape: [] }]);

/** Number of elements folded by a reduction over `axes` of `x`, as a scalar of x's dtype. */
function reducedCount(x: Value, axes: readonly number[]): Value {
  const n = dimProduct(axes.map((a) => x.shape[a]));
  if (typeof n === "number") return scalar(x.graph, n, x.dtype);
  // Symbolic: multiply the dims read at run time (a few int64 elements) and cast once.
  const dims = concat(axes.map((a) => shapeOf(x, a, a + 1)), 0);
  return castTo(apply(REDUCE_PROD, [dims], { keepdims: attr.int(0) }), x.dtype);
}

const reduceSpec = (kind: ReduceKind, axes: readonly number[], keepdims: boolean) =>
  defineOp(kind, (inputs) => {
    const x = inputs[0]!;
    if (kind === "ReduceLogSumExp") expectFloat(kind, x, inputs);
    else expectDType(kind, x, ["float32", "float16", "float64", "int32"], inputs);
    return [{ dtype: x.dtype, shape: reducedShape(x.shape, axes, keepdims) }];
  }, ({ node, grads }) => {
    const g = grads[0];
    if (!g) return [undefined, undefined];
    const x = node.inputs[0]!;
    const y = node.outputs[0];
    // ReduceMax and ReduceLogSumExp broadcast the kept-dims gradient inside an elementwise op;
    // only Sum and Mean need an explicit Expand to x's shape.
    const gk = keptDims(g, axes, keepdims);
    switch (kind) {
      case "ReduceSum":
        return [expand(gk, x.shape), undefined];
      case "ReduceMean":
        return [expand(div(gk, reducedCount(x, axes)), x.shape), undefined];
      case "ReduceMax": {
        // Ties share the gradient equally, so the rule is symmetric in the tied inputs.
        const mask = castTo(equal(x, keptDims(y, axes, keepdims)), x.dtype);
        const count = reduce("ReduceSum", mask, axes, true);
        return [mul(mask, div(gk, count)), undefined];
      }
      case "ReduceLogSumExp":
        return [mul(gk, exp(sub(x, keptDims(y, axes, keepdims)))), undefined];
    }
  });

function reduce(kind: ReduceKind, x: Value, axes?: readonly number[], keepdims = false): Value {
  const ax = reduceAxes(kind, x, axes);
  const spec = reduceSpec(kind, ax, keepdims);
  // Opset 18 takes axes as an input; no input means all axes, and an explicit empty list must
  // be flagged as a no-op (ONNX would otherwise reduce everything).
  const inputs = axes === undefined ? [x] : [x, int64s(x.graph, ax)];
  const noop = axes !== undefined && ax.length === 0;
  return apply(spec, inputs, {
    keepdims: attr.int(keepdims ? 1 : 0),
    ...(noop ? { noop_with_empty_axes: attr.int(1) } : {}),
  });
}

/**
 * Sum over `axes` (default: all).
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { reduceSum } from "./reduce.ts";
 *
 * declare const x: Value;
 * reduceSum(x, [-1], true);
 * ```
 */
export function reduceSum(x: Value, axes?: readonly number[], keepdims = false): Value {
  return reduce("ReduceSum", x, axes, keepdims);
}

/**
 * Mean over `axes` (default: all).
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { reduceMean } from "./reduce.ts";
 *
 * declare const x: Value;
 * reduceMean(x, [1]);
 * ```
 */
export function reduceMean(x: Value, axes?: readonly number[], keepdims = false): Value {
  return reduce("ReduceMean", x, axes, keepdims);
}

/**
 * Max over `axes` (default: all); tied maxima share the gradient.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { reduceMax } from "./reduce.ts";
 *
 * declare const x: Value;
 * reduceMax(x, [-1]);
 * ```
 */
export function reduceMax(x: Value, axes?: readonly number[], keepdims = false): Value {
  return reduce("ReduceMax", x, axes, keepdims);
}

/**
 * log(sum(exp(x))) over `axes`.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { reduceLogSumExp } from "./reduce.ts";
 *
 * declare const logits: Value;
 * reduceLogSumExp(logits, [-1], true);
 * ```
 */
export function reduceLogSumExp(x: Value, axes?: readonly number[], keepdims = false): Value {
  return reduce("ReduceLogSumExp", x, axes, keepdims);
}

/**
 * log-softmax as x - ReduceLogSumExp(x) (no LogSoftmax op: WebGPU runs it on the CPU).
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { logSoftmax } from "./reduce.ts";
 *
 * declare const logits: Value;
 * logSoftmax(logits, -1);
 * ```
 */
export function logSoftmax(x: Value, axis = -1): Value {
  return sub(x, reduceLogSumExp(x, [axis], true));
}

const SOFTMAX = defineOp("Softmax", (inputs, attrs) => {
  const x = inputs[0]!;
  expectFloat("Softmax", x, inputs);
  if (normalizeAxis(attrs.axis.value as number, x.shape.length) === undefined) {
    fail("Softmax", `axis ${attrs.axis.value} out of range`, inputs);
  }
  return [{ dtype: x.dtype, shape: x.shape }];
}, ({ node, grads }) => {
  const g = grads[0];
  if (!g) return [undefined];
  const y = node.outputs[0];
  const axis = node.attrs.axis.value as number;
  const dot = reduceSum(mul(g, y), [axis], true);
  return [mul(y, sub(g, dot))];
});

/**
 * Softmax along one axis (ONNX opset >= 13 semantics).
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { softmax } from "./reduce.ts";
 *
 * declare const scores: Value;
 * softmax(scores, -1);
 * ```
 */
export function softmax(x: Value, axis = -1): Value {
  return apply(SOFTMAX, [x], { axis: attr.int(axis) });
}

/**
 * Sums a gradient over the axes that broadcasting stretched, so it has `shape` again: leading
 * extra axes are dropped, axes where `shape` has a static 1 are kept with size 1.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { sumToShape } from "./reduce.ts";
 *
 * declare const gradOfSum: Value, bias: Value;
 * sumToShape(gradOfSum, bias.shape);
 * ```
 */
export function sumToShape(g: Value, shape: Shape): Value {
  const lead = g.shape.length - shape.length;
  if (lead < 0) fail("sumToShape", `gradient has lower rank than target`, [g]);
  let out = g;
  if (lead > 0) out = reduceSum(out, [...Array(lead).keys()], false);
  const stretched = shape.flatMap((d, i) => (d === 1 && out.shape[i] !== 1 ? [i] : []));
  if (stretched.length > 0) out = reduceSum(out, stretched, true);
  const ok = out.shape.length === shape.length && out.shape.every((d, i) => d === shape[i]);
  if (!ok) fail("sumToShape", `cannot fold gradient to [${shape}]`, [g]);
  return out;
}
