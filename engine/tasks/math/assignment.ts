/**
 * Assignments: equations whose left side only names what the answer is (`x = 3`, `|AB| = 1`,
 * `\angle A = 60^\circ`, `(p, q) = (3, 2)`). Against a bare value they count by their right side,
 * as Math-Verify's `is_assignment_relation` (grader.py) decides with latex2sympy2's
 * `is_expr_of_only_symbols`. `2x = 6` and `x^2 = 4` are equations, not assignments.
 *
 * @example
 * ```ts
 * import type { Relation } from "./ast.ts";
 * import { parseMathNode } from "./parse-math-node.ts";
 * assignment(parseMathNode("|AB| = 1") as Relation)?.value; // the node 1
 * assignment(parseMathNode("2x = 6") as Relation);          // null
 * ```
 */
import type { MathNode, Relation } from "./ast.ts";

/** What an assignment names (its first side) and the value it gives (its last side). */
export interface Assignment {
  readonly target: MathNode;
  readonly value: MathNode;
}

const isNumber = (n: MathNode, value: number) => n.kind === "num" && n.value === value;

/**
 * An expression built from symbols alone: symbols, their sums, products and quotients, powers
 * with a symbol or `-1` exponent, any function of symbols (`|AB|`, `f(x)`, `\sin x`) and
 * tuples of them. Numbers, constants and negation (`-x` is `-1 * x`) are not symbols; neither are
 * `\sqrt` and roots (powers with a number exponent to sympy).
 *
 * @example
 * ```ts
 * import { parseMathNode } from "./parse-math-node.ts";
 * isOnlySymbols(parseMathNode("A:B")); // true
 * isOnlySymbols(parseMathNode("2x"));  // false
 * ```
 */
export function isOnlySymbols(n: MathNode): boolean {
  switch (n.kind) {
    case "sym":
    case "text":
      return true;
    case "add":
      return n.terms.every(isOnlySymbols);
    case "mul":
      return n.factors.every(isOnlySymbols);
    case "tuple":
      return n.items.every(isOnlySymbols);
    case "div":
      // a/b is a * b^-1 (and `\frac{1}{x}` keeps its 1, a number).
      return isOnlySymbols(n.num) && isOnlySymbols(n.den);
    case "pow":
      return isOnlySymbols(n.base) && (isNumber(n.exp, -1) || isOnlySymbols(n.exp));
    case "call":
      return n.name !== "sqrt" && n.name !== "root" && n.args.every(isOnlySymbols);
    case "factorial":
      return isOnlySymbols(n.arg);
    default:
      return false;
  }
}

/**
 * The assignment an equality chain makes, or null. `x = 5 + 5 + 1 = 1/3` assigns 1/3; a chain
 * counts when any side before the last names the answer (`1 = \zzz = x = 0` assigns 0, which
 * Math-Verify reaches by re-parsing the last equation when `\zzz` does not parse).
 *
 * @example
 * ```ts
 * import type { Relation } from "./ast.ts";
 * import { parseMathNode } from "./parse-math-node.ts";
 * assignment(parseMathNode("k = 1") as Relation); // { target: k, value: 1 }
 * ```
 */
export function assignment(r: Relation): Assignment | null {
  if (!r.ops.every((o) => o === "=")) return null;
  const last = r.sides.length - 1;
  if (!r.sides.slice(0, last).some(isOnlySymbols)) return null;
  return { target: r.sides[0], value: r.sides[last] };
}
