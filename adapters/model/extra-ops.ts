/**
 * ONNX ops the decoder needs beyond the compiler's differentiable set: Sin and Cos for rotary
 * angles, and Slice with run-time bounds (a prefix of the position table, the last position).
 * None of them carries a gradient rule: they only ever see positions and masks, which no
 * parameter influences, so autodiff never reaches them (and would refuse if it did).
 */
import {
  defineOp,
  type Dim,
  int64s,
  OnnxGraphError,
  shapeOf,
  SLICE_END,
  type Value,
} from "../onnx/mod.ts";
import { apply } from "../onnx/mod.ts";

const unaryFloat = (type: string) =>
  defineOp(type, (inputs) => {
    const x = inputs[0]!;
    if (x.dtype !== "float32") {
      throw new OnnxGraphError(type, `"${x.name}" must be float32, got ${x.dtype}`, [x.shape]);
    }
    return [{ dtype: x.dtype, shape: x.shape }];
  });

const SIN = unaryFloat("Sin");
const COS = unaryFloat("Cos");

/**
 * Elementwise sine (no gradient).
 *
 * @example
 * ```ts
 * import type { Value } from "../onnx/mod.ts";
 * import { sin } from "./extra-ops.ts";
 *
 * declare const angles: Value; // positions times RoPE's inverse frequencies
 * const s = sin(angles);
 * ```
 */
export function sin(x: Value): Value {
  return apply(SIN, [x]);
}

/**
 * Elementwise cosine (no gradient).
 *
 * @example
 * ```ts
 * import type { Value } from "../onnx/mod.ts";
 * import { cos } from "./extra-ops.ts";
 *
 * declare const angles: Value; // positions times RoPE's inverse frequencies
 * const c = cos(angles);
 * ```
 */
export function cos(x: Value): Value {
  return apply(COS, [x]);
}

const sliceTo = (shape: readonly Dim[]) =>
  defineOp("Slice", (inputs) => [{ dtype: inputs[0]!.dtype, shape }]);

/**
 * The first `like.shape[axis]` entries of the 1-D `table`, read at run time: a position range of
 * symbolic length without Range or CumSum (which WebGPU may run on the CPU).
 *
 * @example
 * ```ts
 * import type { Value } from "../onnx/mod.ts";
 * import { prefixLike } from "./extra-ops.ts";
 *
 * declare const positionTable: Value; // float [maxPositions]: 0, 1, 2, ...
 * declare const tokens: Value; // int32 [batch, seq]
 * prefixLike(positionTable, tokens, 1); // float [seq]
 * ```
 */
export function prefixLike(table: Value, like: Value, axis: number): Value {
  if (table.shape.length !== 1) {
    throw new OnnxGraphError("prefixLike", "table must be 1-D", [table.shape]);
  }
  const g = table.graph;
  const end = shapeOf(like, axis, axis + 1);
  return apply(sliceTo([like.shape[axis]]), [table, int64s(g, [0]), end, int64s(g, [0])]);
}

/**
 * The last entry of `axis` of `x`, keeping the axis with size 1 (no gradient).
 *
 * @example
 * ```ts
 * import type { Value } from "../onnx/mod.ts";
 * import { lastAlong } from "./extra-ops.ts";
 *
 * declare const hidden: Value; // [batch, seq, d]
 * lastAlong(hidden, 1); // [batch, 1, d]
 * ```
 */
export function lastAlong(x: Value, axis: number): Value {
  const g = x.graph;
  const shape = x.shape.map((d, i) => (i === axis ? 1 : d));
  return apply(sliceTo(shape), [x, int64s(g, [-1]), int64s(g, [SLICE_END]), int64s(g, [axis])]);
}
