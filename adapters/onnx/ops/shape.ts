/**
 * Shape-manipulating ops and their VJP rules: Shape, Reshape, Transpose, Concat, Slice, Split,
 * Squeeze, Unsqueeze, Expand (and Pad, used by the Slice gradient). Shape-valued inputs are int64
 * because ONNX requires it; they are built from constants and Shape ops, never from data.
 */
import type { Graph, Value } from "../ir.ts";
import { attr } from "../ir.ts";
import type { Dim, Shape } from "../shape.ts";
import {
  broadcastShapes,
  dimProduct,
  dimQuotient,
  formatShape,
  groupDim,
  isStatic,
  normalizeAxis,
  sameShape,
  splitFactors,
} from "../shape.ts";
import { apply, defineOp, fail, int64s, scalar } from "./common.ts";
import { mul } from "./binary.ts";
import { sumToShape } from "./reduce.ts";

/** ONNX's "to the end" bound for Slice. */
export const SLICE_END = 2 ** 31 - 1;

function axesOrFail(op: string, axes: readonly number[], r: number, inputs: Value[]): number[] {
  const out = axes.map((a) => normalizeAxis(a, r) ?? fail(op, `axis ${a} out of range`, inputs));
  if (new Set(out).size !== out.length) fail(op, `repeated axis in [${axes}]`, inputs);
  return out;
}

const shapeSpec = (start: number, end: number) =>
  defineOp("Shape", () => [{ dtype: "int64", shape: [end - start] }]);

/**
 * The runtime shape of `x` (int64, ONNX's Shape op), optionally axes [start, end).
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { shapeOf } from "./shape.ts";
 *
 * declare const x: Value;
 * shapeOf(x); // int64 [rank]
 * ```
 */
export function shapeOf(x: Value, start = 0, end: number = x.shape.length): Value {
  return x.graph.cached(`shape:${x.id}:${start}:${end}`, () => {
    const attrs = { start: attr.int(start), end: attr.int(end) };
    return apply(shapeSpec(start, end), [x], attrs);
  });
}

/** A 1-element int64 tensor holding dim `d` at run time. */
export function dimTensor(g: Graph, d: Dim): Value {
  if (typeof d === "number") return int64s(g, [d]);
  const source = g.dimSource(d);
  if (source) return shapeOf(source.value, source.axis, source.axis + 1);
  // A product ("batch*seq") that no value carries yet: multiply its factors (int64 shape math).
  const factors = splitFactors(d);
  if (factors.length > 1) {
    return g.cached(
      `dim:${d}`,
      () => factors.map((f) => dimTensor(g, f)).reduce((a, b) => mul(a, b)),
    );
  }
  fail("dimTensor", `symbolic dim "${d}" appears in no value of the graph`, []);
}

/**
 * An int64 shape tensor for `dims`; symbolic dims are read from the values that carry them.
 * A -1 entry passes through (Reshape infers it).
 */
export function shapeTensor(g: Graph, dims: readonly Dim[]): Value {
  if (isStatic(dims)) return int64s(g, dims);
  return g.cached(
    `shapeTensor:${dims.join(",")}`,
    () => concat(dims.map((d) => dimTensor(g, d)), 0),
  );
}

/** The shape of `x` as a tensor: a constant when static, else a Shape op. */
export function shapeTensorOf(x: Value): Value {
  return isStatic(x.shape) ? int64s(x.graph, x.shape) : shapeOf(x);
}

/** Zeros with the dtype and shape of `x` (Expand of a scalar; no ConstantOfShape). */
export function zerosLike(x: Value): Value {
  return expand(scalar(x.graph, 0, x.dtype), x.shape);
}

const reshapeSpec = (out: Shape) =>
  defineOp("Reshape", (inputs) => [{ dtype: inputs[0]!.dtype, shape: out }], ({ node, grads }) => [
    grads[0] && reshapeLike(grads[0], node.inputs[0]!),
  ]);

/** Reshape `x` to the shape of `like` (same element count), reading it at run time if needed. */
export function reshapeLike(x: Value, like: Value): Value {
  return apply(reshapeSpec(like.shape), [x, shapeTensorOf(like)]);
}

/**
 * Reshape with explicit dims; one dim may be -1 (inferred, also symbolically: [b,t,8] -> [-1,8]
 * gives "b*t"). 0 is rejected: ONNX would read it as "copy the input dim".
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { reshape } from "./shape.ts";
 *
 * declare const x: Value;
 * reshape(x, ["batch", -1]);
 * ```
 */
export function reshape(x: Value, dims: readonly Dim[]): Value {
  const inputs = [x];
  if (dims.some((d) => d === 0)) fail("Reshape", "target dim 0 is ambiguous in ONNX", inputs);
  const holes = dims.filter((d) => d === -1).length;
  if (holes > 1) fail("Reshape", `at most one -1 in ${formatShape(dims)}`, inputs);
  const total = dimProduct(x.shape);
  const known = dimProduct(dims.filter((d) => d !== -1));
  let out = dims;
  if (holes === 1) {
    const inferred = dimQuotient(total, known);
    if (inferred === undefined) {
      fail("Reshape", `cannot infer -1 in ${formatShape(dims)}: ${total} / ${known}`, inputs);
    }
    out = dims.map((d) => d === -1 ? inferred : d);
  } else if (total !== known) {
    fail("Reshape", `target ${formatShape(dims)} has ${known} elements, input ${total}`, inputs);
  }
  if (out.some((d) => typeof d === "number" && d < 0)) {
    fail("Reshape", `negative dim in ${formatShape(dims)}`, inputs);
  }
  return apply(reshapeSpec(out), [x, shapeTensor(x.graph, dims)]);
}

const TRANSPOSE = defineOp("Transpose", (inputs, attrs) => {
  const x = inputs[0]!;
  const perm = attrs.perm?.type === "ints" ? attrs.perm.value : [];
  const ok = perm.length === x.shape.length &&
    [...perm].sort((a, b) => a - b).every((p, i) => p === i);
  if (!ok) {
    fail("Transpose", `perm [${perm}] is not a permutation of rank ${x.shape.length}`, inputs);
  }
  return [{ dtype: x.dtype, shape: perm.map((p) => x.shape[p]) }];
}, ({ node, grads }) => {
  const perm = node.attrs.perm.value as readonly number[];
  const inverse = perm.map((_, i) => perm.indexOf(i));
  return [grads[0] && transpose(grads[0], inverse)];
});

/**
 * Permute axes (default: reverse them).
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { transpose } from "./shape.ts";
 *
 * declare const x: Value;
 * transpose(x, [0, 2, 1]);
 * ```
 */
export function transpose(x: Value, perm?: readonly number[]): Value {
  const p = perm ?? x.shape.map((_, i) => x.shape.length - 1 - i);
  return apply(TRANSPOSE, [x], { perm: attr.ints(p) });
}

/** Sum of dims as a dim: a number when static, else a canonical "(a)+(b)" style name. */
function dimSum(dims: readonly Dim[]): Dim {
  if (dims.every((d) => typeof d === "number")) {
    return (dims as number[]).reduce((a, b) => a + b, 0);
  }
  return dims.map(groupDim).join("+");
}

const CONCAT = defineOp("Concat", (inputs, attrs) => {
  const xs = inputs as Value[];
  const r = xs[0].shape.length;
  const axis = normalizeAxis(attrs.axis.value as number, r) ??
    fail("Concat", `axis ${attrs.axis.value} out of range for rank ${r}`, xs);
  for (const x of xs) {
    if (x.dtype !== xs[0].dtype) fail("Concat", "inputs must share one dtype", xs);
    const ok = x.shape.length === r && x.shape.every((d, i) => i === axis || d === xs[0].shape[i]);
    if (!ok) fail("Concat", `shapes differ off axis ${axis}`, xs);
  }
  const shape = xs[0].shape.map((d, i) => i === axis ? dimSum(xs.map((x) => x.shape[i])) : d);
  return [{ dtype: xs[0].dtype, shape }];
}, ({ node, grads, needs }) => {
  const xs = node.inputs as Value[];
  const axis = normalizeAxis(node.attrs.axis.value as number, xs[0].shape.length)!;
  if (!grads[0] || !needs.some(Boolean)) return xs.map(() => undefined);
  if (xs.length === 1) return [grads[0]];
  return split(grads[0], axis, xs.map((x) => x.shape[axis]));
});

/**
 * Concatenate along `axis`.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { concat } from "./shape.ts";
 *
 * declare const a: Value, b: Value;
 * concat([a, b], -1);
 * ```
 */
export function concat(xs: readonly Value[], axis: number): Value {
  return apply(CONCAT, xs, { axis: attr.int(axis) });
}

const splitSpec = (axis: number, sizes: readonly Dim[]) =>
  defineOp("Split", (inputs) => {
    const x = inputs[0]!;
    const total = x.shape[axis];
    const sum = dimSum(sizes);
    if (total !== sum) {
      fail("Split", `sizes [${sizes}] do not add up to dim ${total} of axis ${axis}`, inputs);
    }
    return sizes.map((s) => ({
      dtype: x.dtype,
      shape: x.shape.map((d, i) => (i === axis ? s : d)),
    }));
  }, ({ node, grads }) => {
    if (grads.every((g) => g === undefined)) return [undefined, undefined];
    const parts = node.outputs.map((o, i) => grads[i] ?? zerosLike(o));
    return [concat(parts, axis), undefined];
  });

/**
 * Split along `axis` into pieces of the given sizes (which must add up to the axis dim).
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { split } from "./shape.ts";
 *
 * declare const x: Value;
 * const [a, b] = split(x, 1, [2, 3]);
 * ```
 */
export function split(x: Value, axis: number, sizes: readonly Dim[]): Value[] {
  const a = normalizeAxis(axis, x.shape.length) ??
    fail("Split", `axis ${axis} out of range for rank ${x.shape.length}`, [x]);
  const spec = splitSpec(a, sizes);
  return x.graph.addNode(spec, [x, shapeTensor(x.graph, sizes)], { axis: attr.int(a) });
}

const sliceSpec = (out: Shape, pads: readonly number[]) =>
  defineOp("Slice", (inputs) => [{ dtype: inputs[0]!.dtype, shape: out }], ({ node, grads }) => {
    const x = node.inputs[0]!;
    return [grads[0] && padZeros(grads[0], pads, x.shape), undefined, undefined, undefined];
  });

/**
 * Slice with step 1. On a symbolic axis the start must be >= 0 and the end negative or
 * SLICE_END, so the result's size is "dim - k" and the gradient's padding is static.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { slice } from "./shape.ts";
 *
 * declare const logits: Value;
 * slice(logits, [0], [-1], [1]); // drop the last position of axis 1
 * ```
 */
export function slice(
  x: Value,
  starts: readonly number[],
  ends: readonly number[],
  axes?: readonly number[],
): Value {
  const inputs = [x];
  const r = x.shape.length;
  const ax = axesOrFail("Slice", axes ?? starts.map((_, i) => i), r, inputs);
  if (starts.length !== ax.length || ends.length !== ax.length) {
    fail("Slice", "starts, ends and axes need equal lengths", inputs);
  }
  const out = [...x.shape];
  const pads = new Array<number>(2 * r).fill(0);
  ax.forEach((a, i) => {
    const d = x.shape[a];
    if (typeof d === "number") {
      const clamp = (v: number) => Math.min(Math.max(v < 0 ? v + d : v, 0), d);
      const s = clamp(starts[i]);
      const e = Math.max(clamp(ends[i]), s);
      out[a] = e - s;
      pads[a] = s;
      pads[a + r] = d - e;
      return;
    }
    const endCut = ends[i] >= SLICE_END ? 0 : -ends[i];
    if (starts[i] < 0 || endCut < 0) {
      fail(
        "Slice",
        `on symbolic axis ${a} ("${d}") start must be >= 0 and end negative or SLICE_END`,
        inputs,
      );
    }
    const cut = starts[i] + endCut;
    out[a] = cut === 0 ? d : `${groupDim(d)}-${cut}`;
    pads[a] = starts[i];
    pads[a + r] = endCut;
  });
  const g = x.graph;
  return apply(sliceSpec(out, pads), [x, int64s(g, starts), int64s(g, ends), int64s(g, ax)]);
}

const padSpec = (out: Shape, pads: readonly number[]) =>
  defineOp("Pad", (inputs) => [{ dtype: inputs[0]!.dtype, shape: out }], ({ grads }) => {
    const r = pads.length / 2;
    const starts = pads.slice(0, r);
    const ends = pads.slice(r).map((p) => (p === 0 ? SLICE_END : -p));
    return [grads[0] && slice(grads[0], starts, ends), undefined, undefined];
  });

/** Zero-pad `x` by static `pads` ([begin..., end...]) to `out` (the caller knows the shape). */
export function padZeros(x: Value, pads: readonly number[], out: Shape): Value {
  const g = x.graph;
  return g.addNode(padSpec(out, pads), [x, int64s(g, pads), scalar(g, 0, x.dtype)], {})[0];
}

const squeezeSpec = (out: Shape) =>
  defineOp("Squeeze", (inputs) => [{ dtype: inputs[0]!.dtype, shape: out }], ({ node, grads }) => [
    grads[0] && reshapeLike(grads[0], node.inputs[0]!),
    undefined,
  ]);

/**
 * Remove size-1 axes.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { squeeze } from "./shape.ts";
 *
 * declare const x: Value;
 * squeeze(x, [1]);
 * ```
 */
export function squeeze(x: Value, axes: readonly number[]): Value {
  const ax = axesOrFail("Squeeze", axes, x.shape.length, [x]);
  for (const a of ax) {
    if (x.shape[a] !== 1) fail("Squeeze", `axis ${a} has dim ${x.shape[a]}, not 1`, [x]);
  }
  const out = x.shape.filter((_, i) => !ax.includes(i));
  return apply(squeezeSpec(out), [x, int64s(x.graph, ax)]);
}

const unsqueezeSpec = (out: Shape) =>
  defineOp(
    "Unsqueeze",
    (inputs) => [{ dtype: inputs[0]!.dtype, shape: out }],
    ({ node, grads }) => [
      grads[0] && reshapeLike(grads[0], node.inputs[0]!),
      undefined,
    ],
  );

/**
 * Insert size-1 axes; `axes` index the output.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { unsqueeze } from "./shape.ts";
 *
 * declare const x: Value;
 * unsqueeze(x, [0]);
 * ```
 */
export function unsqueeze(x: Value, axes: readonly number[]): Value {
  const r = x.shape.length + axes.length;
  const ax = axesOrFail("Unsqueeze", axes, r, [x]);
  const out: Dim[] = [];
  let next = 0;
  for (let i = 0; i < r; i++) out.push(ax.includes(i) ? 1 : x.shape[next++]);
  return apply(unsqueezeSpec(out), [x, int64s(x.graph, ax)]);
}

const expandSpec = (out: Shape) =>
  defineOp("Expand", (inputs) => [{ dtype: inputs[0]!.dtype, shape: out }], ({ node, grads }) => [
    grads[0] && sumToShape(grads[0], node.inputs[0]!.shape),
    undefined,
  ]);

/**
 * Broadcast `x` to `dims` (numpy rules, both ways, as ONNX Expand).
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { expand } from "./shape.ts";
 *
 * declare const bias: Value;
 * expand(bias, ["batch", 8]);
 * ```
 */
export function expand(x: Value, dims: readonly Dim[]): Value {
  const out = broadcastShapes(x.shape, dims);
  if (typeof out === "string") fail("Expand", `to ${formatShape(dims)}: ${out}`, [x]);
  if (sameShape(out, x.shape)) return x;
  return apply(expandSpec(out), [x, shapeTensor(x.graph, dims)]);
}
