/**
 * Arithmetic expression trees for generated tasks: integer leaves, four operators, exact value
 * and precedence-aware LaTeX.
 *
 * @example
 * ```ts
 * const e = binary("*", binary("+", leaf(3n), leaf(4n)), leaf(5n));
 * toLatexExpression(e); // "(3 + 4) \\times 5"
 * valueOf(e);           // { num: 35n, den: 1n }
 * ```
 */
import { add, divide, multiply, type Rational, rational, subtract } from "./rational.ts";

/** The four operators. */
export type Operator = "+" | "-" | "*" | "/";

/** A leaf or an operator node. */
export type Expression =
  | { readonly kind: "leaf"; readonly value: bigint }
  | {
    readonly kind: "binary";
    readonly op: Operator;
    readonly left: Expression;
    readonly right: Expression;
  };

export function leaf(value: bigint): Expression {
  return Object.freeze({ kind: "leaf", value });
}

export function binary(op: Operator, left: Expression, right: Expression): Expression {
  return Object.freeze({ kind: "binary", op, left, right });
}

/** Exact value; throws RangeError on division by zero. */
export function valueOf(e: Expression): Rational {
  if (e.kind === "leaf") return rational(e.value);
  const a = valueOf(e.left);
  const b = valueOf(e.right);
  switch (e.op) {
    case "+":
      return add(a, b);
    case "-":
      return subtract(a, b);
    case "*":
      return multiply(a, b);
    case "/":
      return divide(a, b);
  }
}

const PRECEDENCE: Record<Operator, number> = { "+": 1, "-": 1, "*": 2, "/": 2 };
const LATEX_OP: Record<Operator, string> = { "+": "+", "-": "-", "*": "\\times", "/": "\\div" };

function needsParens(child: Expression, parent: Operator, side: "left" | "right"): boolean {
  if (child.kind === "leaf") return false;
  const c = PRECEDENCE[child.op];
  const p = PRECEDENCE[parent];
  // a - (b + c) and a / (b * c) need them on the right; equal precedence on the left does not.
  return c < p || (side === "right" && c === p && (parent === "-" || parent === "/"));
}

/**
 * LaTeX with only the parentheses that precedence requires; a negative operand is wrapped unless
 * it opens the expression (`-3 + (-4)`, never `-3 + -4`).
 */
export function toLatexExpression(e: Expression, leading = true): string {
  if (e.kind === "leaf") return e.value < 0n && !leading ? `(${e.value})` : e.value.toString();
  const wrap = (child: Expression, side: "left" | "right") =>
    needsParens(child, e.op, side)
      ? `(${toLatexExpression(child, true)})`
      : toLatexExpression(child, side === "left" && leading);
  return `${wrap(e.left, "left")} ${LATEX_OP[e.op]} ${wrap(e.right, "right")}`;
}

/**
 * The tree a reader parses from the expression's text: `a + (b - c)` prints as `a + b - c`, which
 * reads as `(a + b) - c`, so same-precedence chains are re-associated to the left wherever the
 * text has no parentheses. Text and value are unchanged; the evaluation order becomes the one
 * the text shows.
 *
 * @example
 * ```ts
 * import { binary, leaf, readingOf, toLatexExpression } from "./expression.ts";
 *
 * const e = binary("+", leaf(1n), binary("-", leaf(2n), leaf(3n))); // 1 + (2 - 3)
 * const read = readingOf(e); // (1 + 2) - 3, as "1 + 2 - 3" reads
 * toLatexExpression(read) === toLatexExpression(e); // true, always ("1 + 2 - 3")
 * ```
 */
export function readingOf(e: Expression): Expression {
  if (e.kind === "leaf") return e;
  const left = readingOf(e.left);
  const right = readingOf(e.right);
  const sameLevel = right.kind === "binary" && PRECEDENCE[right.op] === PRECEDENCE[e.op];
  if (sameLevel && !needsParens(right, e.op, "right")) {
    return readingOf(binary(right.op, binary(e.op, left, right.left), right.right));
  }
  return binary(e.op, left, right);
}

/**
 * One evaluation step: the first operator node (left to right, innermost first) whose operands
 * are both numbers becomes its value. Null when `e` is a number, or when that value is not an
 * integer (leaves are integers, so working stops before the first fraction).
 *
 * @example
 * ```ts
 * import { binary, leaf, reduceOnce, toLatexExpression } from "./expression.ts";
 *
 * const e = binary("-", leaf(13n), binary("-", leaf(1n), leaf(17n)));
 * toLatexExpression(reduceOnce(e)!); // "13 - (-16)"
 * ```
 */
export function reduceOnce(e: Expression): Expression | null {
  if (e.kind === "leaf") return null;
  if (e.left.kind === "leaf" && e.right.kind === "leaf") {
    const v = valueOf(e);
    return v.den === 1n ? leaf(v.num) : null;
  }
  if (e.left.kind === "binary") {
    const left = reduceOnce(e.left);
    return left === null ? null : binary(e.op, left, e.right);
  }
  const right = reduceOnce(e.right);
  return right === null ? null : binary(e.op, e.left, right);
}

/**
 * The intermediate expressions of a step-by-step evaluation in reading order (`readingOf`), in
 * LaTeX, ending with the value when every step stays an integer.
 *
 * @example
 * ```ts
 * import { binary, leaf, workingSteps } from "./expression.ts";
 *
 * workingSteps(binary("-", leaf(13n), binary("-", leaf(1n), leaf(17n)))); // ["13 - (-16)", "29"]
 * ```
 */
export function workingSteps(e: Expression): string[] {
  const steps: string[] = [];
  for (let next = reduceOnce(readingOf(e)); next !== null; next = reduceOnce(next)) {
    steps.push(toLatexExpression(next));
  }
  return steps;
}
