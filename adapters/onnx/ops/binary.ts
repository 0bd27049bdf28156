/**
 * Broadcasting binary ops and their VJP rules: Add, Sub, Mul, Div, Pow, Min, Max, and the
 * comparisons and logic ops (Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Not),
 * which are not differentiable. Every gradient is folded back to its input's shape.
 */
import type { Value, VjpContext } from "../ir.ts";
import { broadcastShapes } from "../shape.ts";
import { apply, defineOp, expectDType, fail, sameDType, scalar } from "./common.ts";
import { sumToShape } from "./reduce.ts";
import { log, neg } from "./unary.ts";
import { where } from "./select.ts";

/** A number operand becomes a scalar constant of the other operand's dtype. */
export type Operand = Value | number;

function operands(op: string, a: Operand, b: Operand): [Value, Value] {
  if (typeof a === "number" && typeof b === "number") {
    throw fail(op, "needs at least one tensor operand", []);
  }
  const va = typeof a === "number" ? scalar((b as Value).graph, a, (b as Value).dtype) : a;
  const vb = typeof b === "number" ? scalar(va.graph, b, va.dtype) : b;
  return [va, vb];
}

function broadcastInfer(
  op: string,
  output: "same" | "bool",
  allowed?: readonly ("float" | "int" | "bool")[],
) {
  return (inputs: readonly (Value | undefined)[]) => {
    const [a, b] = inputs as Value[];
    const dtype = sameDType(op, inputs);
    if (allowed) {
      const kinds = {
        float: ["float32", "float16", "float64"],
        int: ["int32", "int64"],
        bool: ["bool"],
      } as const;
      expectDType(op, a, allowed.flatMap((k) => kinds[k]), inputs);
    }
    const shape = broadcastShapes(a.shape, b.shape);
    if (typeof shape === "string") fail(op, shape, inputs);
    return [{ dtype: output === "bool" ? "bool" as const : dtype, shape }];
  };
}

/** Both input gradients, folded to the input shapes, computing only the needed ones. */
function folded(
  { node, needs }: VjpContext,
  da: () => Value,
  db: () => Value,
): (Value | undefined)[] {
  const [a, b] = node.inputs as Value[];
  return [
    needs[0] ? sumToShape(da(), a.shape) : undefined,
    needs[1] ? sumToShape(db(), b.shape) : undefined,
  ];
}

const ADD = defineOp("Add", broadcastInfer("Add", "same", ["float", "int"]), (ctx) => {
  const g = ctx.grads[0]!;
  return folded(ctx, () => g, () => g);
});
const SUB = defineOp("Sub", broadcastInfer("Sub", "same", ["float", "int"]), (ctx) => {
  const g = ctx.grads[0]!;
  return folded(ctx, () => g, () => neg(g));
});
const MUL = defineOp("Mul", broadcastInfer("Mul", "same", ["float", "int"]), (ctx) => {
  const g = ctx.grads[0]!;
  const [a, b] = ctx.node.inputs as Value[];
  return folded(ctx, () => mul(g, b), () => mul(g, a));
});
const DIV = defineOp("Div", broadcastInfer("Div", "same", ["float", "int"]), (ctx) => {
  const g = ctx.grads[0]!;
  const b = ctx.node.inputs[1]!;
  const y = ctx.node.outputs[0];
  return folded(ctx, () => div(g, b), () => neg(div(mul(g, y), b)));
});
const POW = defineOp("Pow", broadcastInfer("Pow", "same", ["float"]), (ctx) => {
  const g = ctx.grads[0]!;
  const [a, b] = ctx.node.inputs as Value[];
  const y = ctx.node.outputs[0];
  return folded(ctx, () => mul(g, mul(b, pow(a, sub(b, 1)))), () => mul(g, mul(y, log(a))));
});

// Ties send the whole gradient to the second operand (a subgradient; finite differences are
// undefined there).
const minMaxRule = (pick: (a: Value, b: Value) => Value) => (ctx: VjpContext) => {
  const g = ctx.grads[0]!;
  const [a, b] = ctx.node.inputs as Value[];
  const first = pick(a, b);
  return folded(ctx, () => where(first, g, 0), () => where(first, 0, g));
};
const MIN = defineOp("Min", broadcastInfer("Min", "same", ["float", "int"]), minMaxRule(less));
const MAX = defineOp("Max", broadcastInfer("Max", "same", ["float", "int"]), minMaxRule(greater));

/**
 * a + b with broadcasting.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { add } from "./binary.ts";
 *
 * declare const x: Value, bias: Value;
 * add(x, bias);
 * ```
 */
export function add(a: Operand, b: Operand): Value {
  return apply(ADD, operands("Add", a, b));
}
/**
 * a - b with broadcasting.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { sub } from "./binary.ts";
 *
 * declare const p: Value;
 * sub(1, p);
 * ```
 */
export function sub(a: Operand, b: Operand): Value {
  return apply(SUB, operands("Sub", a, b));
}
/**
 * a * b with broadcasting.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { mul } from "./binary.ts";
 *
 * declare const x: Value;
 * mul(x, 0.5);
 * ```
 */
export function mul(a: Operand, b: Operand): Value {
  return apply(MUL, operands("Mul", a, b));
}
/**
 * a / b with broadcasting.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { div } from "./binary.ts";
 *
 * declare const sum: Value, count: Value;
 * div(sum, count);
 * ```
 */
export function div(a: Operand, b: Operand): Value {
  return apply(DIV, operands("Div", a, b));
}
/**
 * a ** b with broadcasting (float).
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { pow } from "./binary.ts";
 *
 * declare const x: Value;
 * pow(x, 2);
 * ```
 */
export function pow(a: Operand, b: Operand): Value {
  return apply(POW, operands("Pow", a, b));
}
/**
 * Elementwise minimum of two tensors.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { min } from "./binary.ts";
 *
 * declare const ratio: Value, clipped: Value;
 * min(ratio, clipped);
 * ```
 */
export function min(a: Operand, b: Operand): Value {
  return apply(MIN, operands("Min", a, b));
}
/**
 * Elementwise maximum of two tensors.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { max } from "./binary.ts";
 *
 * declare const x: Value;
 * max(x, 0);
 * ```
 */
export function max(a: Operand, b: Operand): Value {
  return apply(MAX, operands("Max", a, b));
}

const compare = (type: string) => defineOp(type, broadcastInfer(type, "bool", ["float", "int"]));
const EQUAL = compare("Equal");
const LESS = compare("Less");
const GREATER = compare("Greater");
const LESS_EQUAL = compare("LessOrEqual");
const GREATER_EQUAL = compare("GreaterOrEqual");
const AND = defineOp("And", broadcastInfer("And", "bool", ["bool"]));
const OR = defineOp("Or", broadcastInfer("Or", "bool", ["bool"]));
const NOT = defineOp("Not", (inputs) => {
  expectDType("Not", inputs[0]!, ["bool"], inputs);
  return [{ dtype: "bool", shape: inputs[0]!.shape }];
});

/**
 * a == b (bool).
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { equal } from "./binary.ts";
 *
 * declare const tokens: Value;
 * declare const padId: number;
 * equal(tokens, padId);
 * ```
 */
export function equal(a: Operand, b: Operand): Value {
  return apply(EQUAL, operands("Equal", a, b));
}
/** a < b (bool). */
export function less(a: Operand, b: Operand): Value {
  return apply(LESS, operands("Less", a, b));
}
/** a > b (bool). */
export function greater(a: Operand, b: Operand): Value {
  return apply(GREATER, operands("Greater", a, b));
}
/** a <= b (bool). */
export function lessOrEqual(a: Operand, b: Operand): Value {
  return apply(LESS_EQUAL, operands("LessOrEqual", a, b));
}
/** a >= b (bool). */
export function greaterOrEqual(a: Operand, b: Operand): Value {
  return apply(GREATER_EQUAL, operands("GreaterOrEqual", a, b));
}
/** Logical and of two bool tensors. */
export function and(a: Value, b: Value): Value {
  return apply(AND, [a, b]);
}
/** Logical or of two bool tensors. */
export function or(a: Value, b: Value): Value {
  return apply(OR, [a, b]);
}
/** Logical not of a bool tensor. */
export function not(a: Value): Value {
  return apply(NOT, [a]);
}
