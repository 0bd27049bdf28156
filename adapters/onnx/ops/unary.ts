/**
 * Elementwise unary ops and their VJP rules: Neg, Exp, Log, Sqrt, Sigmoid, Tanh, Erf, Relu, Abs,
 * Reciprocal, Identity. Rules reuse the forward output where that is cheaper (Exp, Sqrt, Sigmoid,
 * Tanh, Reciprocal).
 */
import type { Value, VjpContext } from "../ir.ts";
import { IDENTITY_OP } from "../ir.ts";
import { apply, defineOp, expectDType, expectFloat } from "./common.ts";
import { div, greater, mul, sub } from "./binary.ts";
import { where } from "./select.ts";

type Rule = (g: Value, x: Value, y: Value) => Value;

function unary(type: string, rule: Rule, floatOnly = true) {
  return defineOp(
    type,
    (inputs) => {
      const x = inputs[0]!;
      if (floatOnly) expectFloat(type, x, inputs);
      else expectDType(type, x, ["float32", "float16", "float64", "int32", "int64"], inputs);
      return [{ dtype: x.dtype, shape: x.shape }];
    },
    ({ node, grads }: VjpContext) => [grads[0] && rule(grads[0], node.inputs[0]!, node.outputs[0])],
  );
}

const TWO_OVER_SQRT_PI = 2 / Math.sqrt(Math.PI);

const NEG = unary("Neg", (g) => neg(g), false);
const EXP = unary("Exp", (g, _x, y) => mul(g, y));
const LOG = unary("Log", (g, x) => div(g, x));
const SQRT = unary("Sqrt", (g, _x, y) => div(mul(g, 0.5), y));
const SIGMOID = unary("Sigmoid", (g, _x, y) => mul(g, mul(y, sub(1, y))));
const TANH = unary("Tanh", (g, _x, y) => mul(g, sub(1, mul(y, y))));
const ERF = unary("Erf", (g, x) => mul(g, mul(exp(neg(mul(x, x))), TWO_OVER_SQRT_PI)));
const RELU = unary("Relu", (g, x) => where(greater(x, 0), g, 0));
const ABS = unary("Abs", (g, x) => mul(g, sign(x)), false);
const RECIPROCAL = unary("Reciprocal", (g, _x, y) => neg(mul(g, mul(y, y))));
const SIGN = defineOp("Sign", (inputs) => [{ dtype: inputs[0]!.dtype, shape: inputs[0]!.shape }]);

/** -x. */
export function neg(x: Value): Value {
  return apply(NEG, [x]);
}
/** e^x. */
export function exp(x: Value): Value {
  return apply(EXP, [x]);
}
/** Natural log. */
export function log(x: Value): Value {
  return apply(LOG, [x]);
}
/** Square root. */
export function sqrt(x: Value): Value {
  return apply(SQRT, [x]);
}
/** 1 / (1 + e^-x). */
export function sigmoid(x: Value): Value {
  return apply(SIGMOID, [x]);
}
/** Hyperbolic tangent. */
export function tanh(x: Value): Value {
  return apply(TANH, [x]);
}
/** Gauss error function (exact GELU uses it). */
export function erf(x: Value): Value {
  return apply(ERF, [x]);
}
/** max(x, 0); the gradient at 0 is 0. */
export function relu(x: Value): Value {
  return apply(RELU, [x]);
}
/** |x|; the gradient at 0 is 0. */
export function abs(x: Value): Value {
  return apply(ABS, [x]);
}
/** 1 / x. */
export function reciprocal(x: Value): Value {
  return apply(RECIPROCAL, [x]);
}
/** -1, 0 or 1 by the sign of x (not differentiable). */
export function sign(x: Value): Value {
  return apply(SIGN, [x]);
}
/** A copy of x under a new name. */
export function identity(x: Value): Value {
  return apply(IDENTITY_OP, [x]);
}
