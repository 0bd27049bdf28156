/**
 * Finiteness tests on the graph: IsNaN and IsInf (ONNX opset >= 10), not differentiable. The
 * guard tests only the global gradient norm: any NaN/Inf element makes that norm non-finite.
 */
import { isFloat } from "../dtype.ts";
import { OnnxGraphError } from "../errors.ts";
import type { Value } from "../ir.ts";
import { not, or } from "../ops/binary.ts";
import { apply, defineOp } from "../ops/common.ts";

const predicate = (type: string) =>
  defineOp(type, (inputs) => {
    const x = inputs[0]!;
    if (!isFloat(x.dtype)) {
      throw new OnnxGraphError(type, `input "${x.name}" must be float, got ${x.dtype}`, [x.shape]);
    }
    return [{ dtype: "bool", shape: x.shape }];
  });

const IS_NAN = predicate("IsNaN");
const IS_INF = predicate("IsInf");

/**
 * True where x is neither NaN nor +-Inf.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { isFinite } from "./finite.ts";
 *
 * declare const gradNorm: Value;
 * const ok = isFinite(gradNorm); // bool scalar
 * ```
 */
export function isFinite(x: Value): Value {
  return not(or(apply(IS_NAN, [x]), apply(IS_INF, [x])));
}
