/**
 * Numeric evaluation of an answer tree at one assignment of its free symbols. Symbolic
 * equivalence is decided by evaluating both sides at several fixed points (`equivalence.ts`):
 * two different rational functions agree at a handful of generic points with probability ~0.
 *
 * Values are numbers or matrices. Unknown functions (`f(x)`, `F_n` with a subscript) evaluate to
 * a fixed pseudo-random function of their name and arguments, so `f(x)` equals `f(x)` and
 * differs from `f(y)` without knowing `f`.
 *
 * @example
 * ```ts
 * import { parseMathNode } from "./parse-math-node.ts";
 * evaluate(parseMathNode("x^2 + 1"), new Map([["x", 2]])); // 5
 * ```
 */
import type { MathNode } from "./ast.ts";

/** A matrix value: rows of numbers. */
export type Matrix = number[][];
/** The value of an expression. */
export type Value = number | Matrix;

/** Raised when a node has no numeric value (an interval, a set, free text...). */
export class NotNumericError extends Error {
  override name = "NotNumericError";
  constructor(readonly nodeKind: string) {
    super(`a ${nodeKind} has no numeric value`);
  }
}

const BIGOP_LOOP_LIMIT = 2000;

function hashString(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return (h >>> 0) / 4294967296;
}

/** A smooth, fixed stand-in for an unknown function: same name and arguments, same value. */
function uninterpreted(name: string, args: number[]): number {
  let x = hashString(name) * 97.13;
  args.forEach((a, i) => (x += a * (12.9898 + 4.1414 * i)));
  const s = Math.sin(x) * 43758.5453;
  return 0.5 + (s - Math.floor(s));
}

function scalar(v: Value, what: string): number {
  if (typeof v !== "number") throw new NotNumericError(`matrix used as ${what}`);
  return v;
}

function factorial(n: number): number {
  if (!Number.isInteger(n) || n < 0) return NaN;
  if (n > 170) return Infinity;
  let r = 1;
  for (let i = 2; i <= n; i++) r *= i;
  return r;
}

function gcd(a: number, b: number): number {
  a = Math.abs(a);
  b = Math.abs(b);
  while (b) [a, b] = [b, a % b];
  return a;
}

function applyFunction(name: string, args: number[]): number {
  const [a, b] = args;
  switch (name) {
    case "sin":
      return Math.sin(a);
    case "cos":
      return Math.cos(a);
    case "tan":
      return Math.tan(a);
    case "cot":
      return 1 / Math.tan(a);
    case "sec":
      return 1 / Math.cos(a);
    case "csc":
      return 1 / Math.sin(a);
    case "arcsin":
      return Math.asin(a);
    case "arccos":
      return Math.acos(a);
    case "arctan":
      return Math.atan(a);
    case "sinh":
      return Math.sinh(a);
    case "cosh":
      return Math.cosh(a);
    case "tanh":
      return Math.tanh(a);
    case "ln":
      return Math.log(a);
    case "log":
      return args.length > 1 ? Math.log(a) / Math.log(b) : Math.log(a);
    case "exp":
      return Math.exp(a);
    case "sqrt":
      return Math.sqrt(a);
    case "root":
      return a < 0 && b % 2 === 1 ? -Math.pow(-a, 1 / b) : Math.pow(a, 1 / b);
    case "abs":
      return Math.abs(a);
    case "floor":
      return Math.floor(a);
    case "ceil":
      return Math.ceil(a);
    case "binom":
      return factorial(a) / (factorial(b) * factorial(a - b));
    case "max":
      return Math.max(...args);
    case "min":
      return Math.min(...args);
    case "gcd":
      return args.reduce(gcd);
    case "lcm":
      return args.reduce((x, y) => Math.abs(x * y) / gcd(x, y));
    default:
      return uninterpreted(name, args);
  }
}

function add(a: Value, b: Value): Value {
  if (typeof a === "number" && typeof b === "number") return a + b;
  if (typeof a === "number" || typeof b === "number") {
    throw new NotNumericError("matrix plus number");
  }
  if (a.length !== b.length || a[0].length !== b[0].length) return NaN;
  return a.map((row, i) => row.map((x, j) => x + b[i][j]));
}

function multiply(a: Value, b: Value): Value {
  if (typeof a === "number" && typeof b === "number") return a * b;
  if (typeof a === "number") return (b as Matrix).map((r) => r.map((x) => a * x));
  if (typeof b === "number") return a.map((r) => r.map((x) => x * b));
  if (a[0].length !== b.length) return NaN;
  return a.map((row) => b[0].map((_, j) => row.reduce((s, x, k) => s + x * b[k][j], 0)));
}

function negate(v: Value): Value {
  return typeof v === "number" ? -v : v.map((r) => r.map((x) => -x));
}

/** Evaluates `n` with free symbols bound by `env`; unbound symbols are an error of the caller. */
export function evaluate(n: MathNode, env: ReadonlyMap<string, number>): Value {
  switch (n.kind) {
    case "num":
      return n.value;
    case "sym": {
      const v = env.get(n.name);
      if (v === undefined) throw new NotNumericError(`unbound symbol ${n.name}`);
      return v;
    }
    case "const":
      if (n.name === "reals") throw new NotNumericError("set of reals");
      return n.name === "pi" ? Math.PI : n.name === "e" ? Math.E : Infinity;
    case "add":
      return n.terms.map((t) => evaluate(t, env)).reduce(add);
    case "mul":
      return n.factors.map((f) => evaluate(f, env)).reduce(multiply);
    case "neg":
      return negate(evaluate(n.arg, env));
    case "div": {
      const den = scalar(evaluate(n.den, env), "denominator");
      // 1/0 is undefined, not infinity: `12:00` must not equal `1:00`.
      if (den === 0) return NaN;
      return multiply(evaluate(n.num, env), 1 / den);
    }
    case "pow": {
      const base = evaluate(n.base, env);
      const exp = scalar(evaluate(n.exp, env), "exponent");
      if (typeof base === "number") return Math.pow(base, exp);
      if (!Number.isInteger(exp) || exp < 1 || exp > 64) return NaN;
      let r: Value = base;
      for (let i = 1; i < exp; i++) r = multiply(r, base);
      return r;
    }
    case "call": {
      if (n.name === "det") return determinant(evaluate(n.args[0], env));
      return applyFunction(
        n.name,
        n.args.map((a) => scalar(evaluate(a, env), `${n.name} argument`)),
      );
    }
    case "factorial":
      return factorial(scalar(evaluate(n.arg, env), "factorial argument"));
    case "matrix":
      return n.rows.map((r) => r.map((c) => scalar(evaluate(c, env), "matrix entry")));
    case "bigop":
      return bigOperator(n, env);
    default:
      throw new NotNumericError(n.kind);
  }
}

function determinant(v: Value): number {
  if (typeof v === "number") return v;
  const m = v.map((r) => [...r]);
  const size = m.length;
  if (m.some((r) => r.length !== size)) return NaN;
  let det = 1;
  for (let c = 0; c < size; c++) {
    let p = c;
    for (let r = c + 1; r < size; r++) if (Math.abs(m[r][c]) > Math.abs(m[p][c])) p = r;
    if (m[p][c] === 0) return 0;
    if (p !== c) {
      [m[p], m[c]] = [m[c], m[p]];
      det = -det;
    }
    det *= m[c][c];
    for (let r = c + 1; r < size; r++) {
      const f = m[r][c] / m[c][c];
      for (let k = c; k < size; k++) m[r][k] -= f * m[c][k];
    }
  }
  return det;
}

function bigOperator(
  n: Extract<MathNode, { kind: "bigop" }>,
  env: ReadonlyMap<string, number>,
): number {
  const lo = scalar(evaluate(n.lo, env), "lower bound");
  const hi = scalar(evaluate(n.hi, env), "upper bound");
  const inner = new Map(env);
  if (Number.isInteger(lo) && Number.isInteger(hi) && hi - lo < BIGOP_LOOP_LIMIT) {
    let acc = n.op === "sum" ? 0 : 1;
    for (let k = lo; k <= hi; k++) {
      inner.set(n.variable, k);
      const v = scalar(evaluate(n.body, inner), "summand");
      acc = n.op === "sum" ? acc + v : acc * v;
    }
    return acc;
  }
  // Symbolic bounds: an opaque but fixed function of the bounds and the body.
  inner.set(n.variable, 0.377);
  const body = scalar(evaluate(n.body, inner), "summand");
  return uninterpreted(n.op, [lo, hi, body]);
}

/** Every symbol name that occurs in `n` (bound summation variables included). */
export function freeSymbols(n: MathNode, out: string[] = []): string[] {
  const visit = (m: MathNode): void => {
    switch (m.kind) {
      case "sym":
        if (!out.includes(m.name)) out.push(m.name);
        return;
      case "num":
      case "const":
      case "text":
      case "ellipsis":
        return;
      case "bigop":
        if (!out.includes(m.variable)) out.push(m.variable);
        [m.lo, m.hi, m.body].forEach(visit);
        return;
      default:
        children(m).forEach(visit);
    }
  };
  visit(n);
  return out;
}

/** The direct children of a node, in order. */
function children(m: MathNode): readonly MathNode[] {
  switch (m.kind) {
    case "add":
      return m.terms;
    case "mul":
      return m.factors;
    case "neg":
    case "factorial":
      return [m.arg];
    case "div":
      return [m.num, m.den];
    case "pow":
      return [m.base, m.exp];
    case "call":
      return m.args;
    case "pm":
      return m.left ? [m.left, m.right] : [m.right];
    case "tuple":
    case "set":
      return m.items;
    case "interval":
      return [m.lo, m.hi];
    case "union":
      return m.parts;
    case "relation":
      return m.sides;
    case "member":
      return [m.elem, m.set];
    case "matrix":
      return m.rows.flat();
    case "bigop":
      return [m.lo, m.hi, m.body];
    default:
      return [];
  }
}
