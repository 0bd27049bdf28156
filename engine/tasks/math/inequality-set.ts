/**
 * The solution set of a one-variable inequality chain, as Math-Verify gets it from sympy's
 * `as_set()` when a gold relation meets a predicted set (grader.py `sympy_expr_eq`): `1 < x < 3`
 * is the open interval (1, 3), `x \ge 2` is [2, oo), `1 < 2x < 6` is (1/2, 3) and
 * `1 \le |z| \le 3/2` is [-3/2, -1] U [1, 3/2]. An unknown function of the variable stands for
 * the variable, as Math-Verify's `unwrap_fcs` turns `f(x)` into a symbol: `0 < f(x) < 1` is (0, 1).
 *
 * @example
 * ```ts
 * import { type Relation, show } from "./ast.ts";
 * import { parseMathNode } from "./parse-math-node.ts";
 * show(relationToSet(parseMathNode("1 < 2x < 6") as Relation)!); // "(1/2, 6/2)"
 * ```
 */
import {
  INF,
  type Interval,
  KNOWN_FUNCTIONS,
  type MathNode,
  NEG_INF,
  node,
  num,
  type Relation,
  type RelationOp,
} from "./ast.ts";
import { evaluate, freeSymbols } from "./evaluate.ts";

const FLIP: Record<RelationOp, RelationOp> = {
  "=": "=",
  "!=": "!=",
  "<": ">",
  "<=": ">=",
  ">": "<",
  ">=": "<=",
};

function interval(lo: MathNode, hi: MathNode, loClosed: boolean, hiClosed: boolean): Interval {
  return node({ kind: "interval", lo, hi, loClosed, hiClosed });
}

/** The interval `r` bounds its one non-constant side to, or null when it is not such a chain. */
function boundsOfCenter(r: Relation, center: number): Interval | null {
  if (r.sides.length === 2) {
    const op = center === 0 ? r.ops[0] : FLIP[r.ops[0]];
    const bound = r.sides[1 - center];
    if (op === "<" || op === "<=") return interval(NEG_INF, bound, false, op === "<=");
    if (op === ">" || op === ">=") return interval(bound, INF, op === ">=", false);
    return null;
  }
  if (r.sides.length !== 3 || center !== 1) return null;
  const [a, b] = r.ops;
  const up = (o: RelationOp) => o === "<" || o === "<=";
  const down = (o: RelationOp) => o === ">" || o === ">=";
  if (up(a) && up(b)) return interval(r.sides[0], r.sides[2], a === "<=", b === "<=");
  if (down(a) && down(b)) return interval(r.sides[2], r.sides[0], b === ">=", a === ">=");
  return null;
}

function constantValue(n: MathNode): number | null {
  try {
    const v = evaluate(n, new Map());
    return typeof v === "number" && !Number.isNaN(v) ? v : null;
  } catch {
    return null;
  }
}

/** |x| in [lo, hi]  <=>  x in [-hi, -lo] U [lo, hi], or (-hi, hi) when lo <= 0. */
function absoluteValueSet(set: Interval): MathNode | null {
  const lo = constantValue(set.lo);
  if (lo === null) return null;
  const negHi = node({ kind: "neg", arg: set.hi });
  if (!(lo > 0)) return interval(negHi, set.hi, set.hiClosed, set.hiClosed);
  return node({
    kind: "union",
    parts: [interval(negHi, node({ kind: "neg", arg: set.lo }), set.hiClosed, set.loClosed), set],
  });
}

/** `c = slope * v + intercept` for the single variable `v` of `c`, or null when not linear. */
function linearForm(c: MathNode): { slope: number; intercept: number } | null {
  const names = freeSymbols(c);
  if (names.length !== 1) return null;
  const at = (x: number) => {
    try {
      const v = evaluate(c, new Map([[names[0], x]]));
      return typeof v === "number" ? v : NaN;
    } catch {
      return NaN; // a side with no numeric value (text, a set) is no line
    }
  };
  const intercept = at(0);
  const slope = at(1) - intercept;
  const probe = 2.5;
  const expected = intercept + probe * slope;
  const linear = Number.isFinite(slope) && slope !== 0 &&
    Math.abs(at(probe) - expected) <= 1e-9 * Math.max(1, Math.abs(expected));
  return linear ? { slope, intercept } : null;
}

/** The set of v with slope * v + intercept in `set`: each bound b becomes (b - intercept) / slope. */
function solveLinear(set: Interval, line: { slope: number; intercept: number }): Interval {
  const infinite = (b: MathNode) => b === INF || b === NEG_INF;
  const map = (b: MathNode) => {
    if (infinite(b)) return (b === INF) === (line.slope > 0) ? INF : NEG_INF;
    const shifted = line.intercept === 0
      ? b
      : node({ kind: "add", terms: [b, num(-line.intercept)] });
    return line.slope === 1 ? shifted : node({ kind: "div", num: shifted, den: num(line.slope) });
  };
  return line.slope > 0
    ? interval(map(set.lo), map(set.hi), set.loClosed, set.hiClosed)
    : interval(map(set.hi), map(set.lo), set.hiClosed, set.loClosed);
}

/**
 * The solution set of a one-variable inequality chain, or null when `r` is not one (two
 * variables, a non-linear side other than `|x|`, an equation).
 *
 * @example
 * ```ts
 * import { type Relation, show } from "./ast.ts";
 * import { parseMathNode } from "./parse-math-node.ts";
 * show(relationToSet(parseMathNode("x \\ge 2") as Relation)!); // "[2, oo)"
 * ```
 */
export function relationToSet(r: Relation): MathNode | null {
  const center = r.sides.findIndex((s) => freeSymbols(s).length > 0);
  if (center < 0 || r.sides.some((s, i) => i !== center && freeSymbols(s).length > 0)) return null;
  const set = boundsOfCenter(r, center);
  if (!set) return null;
  const c = r.sides[center];
  if (c.kind === "sym" || (c.kind === "call" && !KNOWN_FUNCTIONS.has(c.name))) return set;
  if (c.kind === "call" && c.name === "abs" && c.args[0].kind === "sym") {
    return absoluteValueSet(set);
  }
  const line = linearForm(c);
  return line ? solveLinear(set, line) : null;
}
