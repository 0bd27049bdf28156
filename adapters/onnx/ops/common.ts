/**
 * Helpers shared by the op families: checked node construction, constants, and dtype checks.
 */
import type { DType } from "../dtype.ts";
import { arrayConstructor, isFloat, ONNX_DTYPE_CODE } from "../dtype.ts";
import { OnnxGraphError } from "../errors.ts";
import type { Attrs, Graph, OpSpec, TensorData, Value, ValueType, VjpRule } from "../ir.ts";
import { attr, tensor } from "../ir.ts";

/** Throws the standard build error for `op`, listing the shapes of `inputs`. */
export function fail(op: string, detail: string, inputs: readonly (Value | undefined)[]): never {
  throw new OnnxGraphError(op, detail, inputs.map((v) => v?.shape));
}

/** The graph that owns the first defined value; every op builder starts here. */
export function graphOf(op: string, values: readonly (Value | undefined)[]): Graph {
  const first = values.find((v) => v !== undefined);
  if (!first) throw new OnnxGraphError(op, "needs at least one input value");
  return first.graph;
}

/** Throws unless every defined input has the same dtype; returns that dtype. */
export function sameDType(op: string, inputs: readonly (Value | undefined)[]): DType {
  const defined = inputs.filter((v): v is Value => v !== undefined);
  const dtype = defined[0].dtype;
  if (defined.some((v) => v.dtype !== dtype)) {
    fail(op, `inputs must share one dtype, got ${defined.map((v) => v.dtype).join(", ")}`, inputs);
  }
  return dtype;
}

/** Throws unless `v` has a float dtype. */
export function expectFloat(op: string, v: Value, inputs: readonly (Value | undefined)[]): void {
  if (!isFloat(v.dtype)) fail(op, `"${v.name}" must be float, got ${v.dtype}`, inputs);
}

/** Throws unless `v` has one of the listed dtypes. */
export function expectDType(
  op: string,
  v: Value,
  allowed: readonly DType[],
  inputs: readonly (Value | undefined)[],
): void {
  if (!allowed.includes(v.dtype)) {
    fail(op, `"${v.name}" must be ${allowed.join(" or ")}, got ${v.dtype}`, inputs);
  }
}

/** Defines an op spec (frozen); `vjp` may be omitted for non-differentiable ops. */
export function defineOp(
  type: string,
  infer: (inputs: readonly (Value | undefined)[], attrs: Attrs) => readonly ValueType[],
  vjp?: VjpRule,
): OpSpec {
  return Object.freeze({ type, infer, vjp });
}

/** Adds a single-output node and returns its value. */
export function apply(
  spec: OpSpec,
  inputs: readonly (Value | undefined)[],
  attrs: Attrs = {},
): Value {
  return graphOf(spec.type, inputs).addNode(spec, inputs, attrs)[0];
}

const CONSTANT = defineOp("Constant", (_inputs, attrs) => {
  const t = attrs.value;
  if (t?.type !== "tensor") fail("Constant", "needs a tensor attribute `value`", []);
  return [{ dtype: t.value.dtype, shape: t.value.shape }];
});

/**
 * A Constant node holding `data`.
 *
 * @example
 * ```ts
 * import { type Graph, tensor } from "../ir.ts";
 * import { constant } from "./common.ts";
 *
 * declare const g: Graph;
 * constant(g, tensor("float32", [2], new Float32Array([1, 2])));
 * ```
 */
export function constant(g: Graph, data: TensorData): Value {
  return g.addNode(CONSTANT, [], { value: attr.tensor(data) })[0];
}

/**
 * A cached scalar constant of a float or int dtype (float16 is built as float32 then Cast, which
 * onnxruntime folds at load time).
 *
 * @example
 * ```ts
 * import type { Graph } from "../ir.ts";
 * import { scalar } from "./common.ts";
 *
 * declare const g: Graph;
 * scalar(g, 0.5, "float32");
 * ```
 */
export function scalar(g: Graph, value: number, dtype: DType): Value {
  return g.cached(`scalar:${dtype}:${Object.is(value, -0) ? "-0" : value}`, () => {
    if (dtype === "float16") {
      return castTo(scalar(g, value, "float32"), "float16");
    }
    const data = new (arrayConstructor(dtype))(1);
    if (data instanceof BigInt64Array) data[0] = BigInt(value);
    else data[0] = value;
    return constant(g, tensor(dtype, [], data));
  });
}

/** A cached 1-D int64 constant: axes, shapes, pads (the places ONNX requires int64). */
export function int64s(g: Graph, values: readonly number[]): Value {
  return g.cached(`int64s:${values.join(",")}`, () =>
    constant(
      g,
      tensor("int64", [values.length], BigInt64Array.from(values, (v) => BigInt(v))),
    ));
}

const CAST = defineOp("Cast", (inputs, attrs) => {
  const to = attrs.to;
  if (to?.type !== "int") fail("Cast", "needs int attribute `to`", inputs);
  const dtype = DTYPE_BY_CODE.get(to.value);
  if (!dtype) fail("Cast", `unsupported target code ${to.value}`, inputs);
  return [{ dtype, shape: inputs[0]!.shape }];
}, ({ node, grads, needs }) => {
  const x = node.inputs[0]!;
  return [needs[0] && isFloat(x.dtype) && grads[0] ? castTo(grads[0], x.dtype) : undefined];
});

const DTYPE_BY_CODE = new Map(
  Object.entries(ONNX_DTYPE_CODE).map(([k, v]) => [v, k as DType] as const),
);

/**
 * Cast to `dtype`; a no-op (returns `x`) when it already has that dtype. Gradients flow back
 * between float dtypes only.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { castTo } from "./common.ts";
 *
 * declare const mask: Value;
 * castTo(mask, "float32");
 * ```
 */
export function castTo(x: Value, dtype: DType): Value {
  if (x.dtype === dtype) return x;
  return apply(CAST, [x], { to: attr.int(ONNX_DTYPE_CODE[dtype]) });
}
