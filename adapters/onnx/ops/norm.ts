/**
 * RMS normalization in one node, onnxruntime's `SimplifiedLayerNormalization` (a schema of its own
 * that it registers in the ONNX domain, with kernels on its CPU, WebAssembly and WebGPU providers):
 * y = x * r * scale with r = 1 / sqrt(mean(x^2) + eps) over the last axis. One dispatch where the
 * composed form (Mul, ReduceMean, Add, Sqrt, Reciprocal, Mul, Mul) takes seven; the kernel sums in
 * its own order, so values differ from the composed form's in the low bits. The gradient composes
 * r again from x (five nodes), so a train step saves one node per norm and a forward six.
 *
 * Gradient, with gdy = dy * scale (broadcast over the last axis):
 *   dx = r * (gdy - x * r^2 * mean(x * gdy))      (r depends on every x of its row)
 *   dscale = sum over the leading axes of dy * x * r
 */
import { attr, type Value } from "../ir.ts";
import { add, mul, sub } from "./binary.ts";
import { apply, defineOp, expectFloat, fail } from "./common.ts";
import { reduceMean, sumToShape } from "./reduce.ts";
import { reciprocal, sqrt } from "./unary.ts";

const SIMPLIFIED_LAYER_NORM = defineOp("SimplifiedLayerNormalization", (inputs) => {
  const [x, scale] = inputs as readonly Value[];
  const op = "SimplifiedLayerNormalization";
  expectFloat(op, x, inputs);
  const last = x.shape[x.shape.length - 1];
  if (x.shape.length === 0 || scale.shape.length !== 1 || scale.shape[0] !== last) {
    fail(op, "scale must be 1-D with the size of x's last axis", inputs);
  }
  if (scale.dtype !== x.dtype) fail(op, "scale must have x's dtype", inputs);
  return [{ dtype: x.dtype, shape: x.shape }];
}, ({ node, grads, needs }) => {
  const [x, scale] = node.inputs as readonly Value[];
  const [dy] = grads;
  if (dy === undefined) return [undefined, undefined];
  const epsilon = node.attrs.epsilon;
  if (epsilon?.type !== "float") fail("SimplifiedLayerNormalization", "lacks its epsilon", [x]);
  // r again from x: the kernel's optional inv_std_var output holds other values on onnxruntime's
  // WebGPU providers (native and JSEP alike; their training diverged from the CPU's).
  const r = reciprocal(sqrt(add(reduceMean(mul(x, x), [-1], true), epsilon.value)));
  const gdy = mul(dy, scale);
  const dx = needs[0]
    ? mul(r, sub(gdy, mul(mul(x, mul(r, r)), reduceMean(mul(x, gdy), [-1], true))))
    : undefined;
  const dscale = needs[1] ? sumToShape(mul(dy, mul(x, r)), scale.shape) : undefined;
  return [dx, dscale];
});

/**
 * x / sqrt(mean(x^2) + eps) * scale over the last axis of float32 `x`, in one node.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { rmsNormalization } from "./norm.ts";
 *
 * declare const hidden: Value; // float32 [batch, seq, d]
 * declare const weight: Value; // float32 [d]
 * const normed = rmsNormalization(hidden, weight, 1e-6);
 * ```
 */
export function rmsNormalization(x: Value, scale: Value, epsilon: number): Value {
  return apply(SIMPLIFIED_LAYER_NORM, [x, scale], {
    axis: attr.int(-1),
    epsilon: attr.float(epsilon),
    stash_type: attr.int(1),
  });
}
