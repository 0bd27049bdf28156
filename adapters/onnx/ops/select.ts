/**
 * Selection ops and their VJP rules: Where (gradient routed to the chosen branch) and Clip
 * (gradient passes where min <= x <= max).
 */
import type { Value } from "../ir.ts";
import { broadcastShapes } from "../shape.ts";
import { apply, defineOp, expectDType, fail, sameDType, scalar } from "./common.ts";
import { and, greaterOrEqual, lessOrEqual, max as maximum, min as minimum } from "./binary.ts";
import type { Operand } from "./binary.ts";
import { sumToShape } from "./reduce.ts";

const WHERE = defineOp("Where", (inputs) => {
  const [c, a, b] = inputs as Value[];
  expectDType("Where", c, ["bool"], inputs);
  const dtype = sameDType("Where", [a, b]);
  const ab = broadcastShapes(a.shape, b.shape);
  const shape = typeof ab === "string" ? ab : broadcastShapes(c.shape, ab);
  if (typeof shape === "string") fail("Where", shape, inputs);
  return [{ dtype, shape }];
}, ({ node, grads, needs }) => {
  const g = grads[0]!;
  const [c, a, b] = node.inputs as Value[];
  return [
    undefined,
    needs[1] ? sumToShape(where(c, g, 0), a.shape) : undefined,
    needs[2] ? sumToShape(where(c, 0, g), b.shape) : undefined,
  ];
});

/**
 * cond ? a : b, with broadcasting; number operands become scalars of the other's dtype.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { where } from "./select.ts";
 *
 * declare const mask: Value, logp: Value;
 * where(mask, logp, 0);
 * ```
 */
export function where(cond: Value, a: Operand, b: Operand): Value {
  if (typeof a === "number" && typeof b === "number") {
    fail("Where", "needs at least one tensor branch", [cond]);
  }
  const va = typeof a === "number" ? scalar(cond.graph, a, (b as Value).dtype) : a;
  const vb = typeof b === "number" ? scalar(cond.graph, b, va.dtype) : b;
  return apply(WHERE, [cond, va, vb]);
}

const CLIP = defineOp("Clip", (inputs) => {
  const [x, lo, hi] = inputs;
  sameDType("Clip", inputs);
  for (const bound of [lo, hi]) {
    if (bound && bound.shape.length !== 0) fail("Clip", "min and max must be scalars", inputs);
  }
  return [{ dtype: x!.dtype, shape: x!.shape }];
}, ({ node, grads }) => {
  const g = grads[0]!;
  const [x, lo, hi] = node.inputs;
  // Bounds are hyperparameters here: no gradient flows to them.
  const inside = [lo && greaterOrEqual(x!, lo), hi && lessOrEqual(x!, hi)].filter(
    (m): m is Value => m !== undefined,
  );
  if (inside.length === 0) return [g, undefined, undefined];
  const mask = inside.length === 2 ? and(inside[0], inside[1]) : inside[0];
  return [where(mask, g, 0), undefined, undefined];
});

/**
 * Clamp x to [min, max]; either bound may be omitted. Bounds get no gradient.
 *
 * Constant bounds make one Clip node. A bound computed in the graph (PPO's 1 - eps from a fed
 * eps) clamps with Max then Min instead: onnxruntime's WebGPU Clip reads its bounds on the host,
 * so it copies a computed bound off the GPU mid-run, which waits for all queued GPU work (two
 * such copies per train step, at least 11 ms each under Deno, before this). Max and Min pick
 * the same values, and with x as their second operand a tie sends the gradient to x, as Clip's
 * rule does; bounds still get none.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { clip } from "./select.ts";
 *
 * declare const ratio: Value;
 * const eps = 0.2;
 * clip(ratio, 1 - eps, 1 + eps);
 * ```
 */
export function clip(x: Value, min?: Operand, max?: Operand): Value {
  if (typeof min === "object" || typeof max === "object") {
    const fixed = (v: Operand) => typeof v === "number" ? scalar(x.graph, v, x.dtype) : v;
    const low = min === undefined ? x : maximum(fixed(min), x);
    return max === undefined ? low : minimum(fixed(max), low);
  }
  const bound = (v: Operand | undefined) => typeof v === "number" ? scalar(x.graph, v, x.dtype) : v;
  return apply(CLIP, [x, bound(min), bound(max)]);
}
