/**
 * Equivalence of two parsed answers in the spirit of Math-Verify (grader.py `sympy_expr_eq`):
 * numbers up to `floatRounding` decimals, expressions by evaluation at fixed generic points, sets
 * and lists ignoring order and repeats, sets against tuples by their elements, intervals with
 * their end types, relations up to scaling (`x < 1` ~ `-x > -1`), assignments by their value
 * (`k = 1` ~ `1`, `a = 1, b = 2` ~ `(1, 2)`), inequalities against intervals (`1 < x < 3` ~
 * `(1, 3)`).
 *
 * @example
 * ```ts
 * import { DEFAULT_GRADE_OPTIONS } from "./options.ts";
 * import { parseMathNode } from "./parse-math-node.ts";
 * compareAnswers(parseMathNode("\\frac{x+2}{7}"), parseMathNode("x/7 + 2/7"), DEFAULT_GRADE_OPTIONS);
 * // { equal: true, reason: "equal at 4 sample points" }
 * ```
 */
import { INF, type Interval, type MathNode, NEG_INF, node, type Relation, show } from "./ast.ts";
import { assignment } from "./assignment.ts";
import { evaluate, freeSymbols, NotNumericError, type Value } from "./evaluate.ts";
import { relationToSet } from "./inequality-set.ts";
import type { GradeOptions } from "./options.ts";

/** The outcome of one comparison with a short explanation. */
export interface Comparison {
  readonly equal: boolean;
  readonly reason: string;
}

const SAMPLE_POINTS = 4;
const MAX_PM_VARIANTS = 16;
type SetNode = Extract<MathNode, { kind: "set" }>;

/** Compares a gold answer with a predicted one. Asymmetric: see the module comment. */
export function compareAnswers(gold: MathNode, pred: MathNode, options: GradeOptions): Comparison {
  const c = new Comparer(options);
  if (c.compare(gold, pred)) return { equal: true, reason: c.lastReason };
  if (!options.strict) {
    const renamed = new Comparer(options);
    if (renamed.compare(renameVariables(gold), renameVariables(pred))) {
      return { equal: true, reason: `${renamed.lastReason} after renaming variables` };
    }
  }
  return {
    equal: false,
    reason: c.failReason ?? `${describe(gold)} differs from ${describe(pred)}`,
  };
}

function describe(n: MathNode): string {
  return n.kind === "num" || n.kind === "sym" ? `value ${show(n)}` : `${n.kind} ${show(n)}`;
}

class Comparer {
  lastReason = "equal";
  failReason: string | undefined;

  constructor(private readonly options: GradeOptions) {}

  private ok(reason: string): true {
    this.lastReason = reason;
    return true;
  }

  private no(reason: string): false {
    this.failReason ??= reason;
    return false;
  }

  compare(goldIn: MathNode, predIn: MathNode): boolean {
    const gold = prepare(goldIn);
    const pred = prepare(predIn);
    // Relations first, as grader.py unwraps assignments and equations before comparing sets:
    // `(m, n) = (1, 2)` against `m = 1, n = 2` compares `(1, 2)` with that list.
    if (gold.kind === "relation" && pred.kind === "relation") return this.relations(gold, pred);
    if (gold.kind === "relation") {
      const assigned = assignment(gold);
      if (assigned) return this.compare(assigned.value, pred);
      if (isSetLike(pred)) {
        const asSet = relationToSet(gold);
        if (asSet) return this.compare(asSet, pred);
      }
      return this.no(
        `gold relation ${show(gold)} is not an assignment a prediction value can match`,
      );
    }
    if (pred.kind === "relation") {
      if (pred.ops.every((o) => o === "=")) {
        return this.compare(gold, pred.sides[pred.sides.length - 1]);
      }
      if (isSetLike(gold)) {
        if (!this.options.allowSetRelation) {
          return this.no("predicted relation against a gold set needs allow_set_relation_comp");
        }
        const asSet = relationToSet(pred);
        if (asSet) return this.compare(gold, asSet);
      }
      return this.no(`predicted relation ${show(pred)} against ${describe(gold)}`);
    }
    if (gold.kind === "set" && pred.kind === "set") {
      return this.sameElements(gold.items, pred.items);
    }
    if (gold.kind === "set") return this.setAgainst(gold, pred, "gold");
    if (pred.kind === "set") return this.setAgainst(pred, gold, "pred");
    if (gold.kind === "union" || pred.kind === "union") {
      const g = gold.kind === "union" ? gold.parts : [gold];
      const p = pred.kind === "union" ? pred.parts : [pred];
      return this.sameElements(g, p) && this.ok("same union of intervals");
    }
    if (
      gold.kind === "interval" || pred.kind === "interval" || isReals(gold) || isReals(pred)
    ) return this.intervals(gold, pred);
    if (gold.kind === "tuple" || pred.kind === "tuple") {
      if (
        gold.kind !== "tuple" || pred.kind !== "tuple" || gold.items.length !== pred.items.length
      ) {
        return this.no(`${describe(gold)} and ${describe(pred)} have different shapes`);
      }
      return gold.items.every((g, i) => this.compare(g, pred.items[i])) && this.ok("equal tuples");
    }
    if (gold.kind === "text" || pred.kind === "text") {
      const same = gold.kind === "text" && pred.kind === "text" &&
        gold.value.trim().toLowerCase() === pred.value.trim().toLowerCase();
      return same ? this.ok("same text") : this.no(`text ${show(gold)} vs ${show(pred)}`);
    }
    if (gold.kind === "ellipsis" || pred.kind === "ellipsis") return gold.kind === pred.kind;
    return this.values(gold, pred);
  }

  /** `compare` without touching this comparer's reasons. */
  private agrees(gold: MathNode, pred: MathNode): boolean {
    return new Comparer(this.options).compare(gold, pred);
  }

  /**
   * A set against another answer (not a set), as Math-Verify's `sympy_compare_sets` has it. A set
   * and a tuple (the open interval `(a, b)` is a tuple here) match when they have as many
   * elements: in any order when the set is the gold answer, in the written order when it is
   * predicted (`sympy_deep_compare_set_and_tuple` sorts a gold set but keeps a predicted one as
   * written). A one-element set is its element against anything else.
   */
  private setAgainst(set: SetNode, other: MathNode, setSide: "gold" | "pred"): boolean {
    if (other.kind === "tuple") {
      if (set.items.length !== other.items.length) {
        return this.no(`set ${show(set)} and tuple ${show(other)} differ in size`);
      }
      if (setSide === "gold") return this.sameElements(set.items, other.items);
      return other.items.every((g, i) => this.compare(g, set.items[i])) &&
        this.ok("same elements in the same order");
    }
    if (set.items.length === 1) {
      const [only] = set.items;
      return setSide === "gold" ? this.compare(only, other) : this.compare(other, only);
    }
    return setSide === "gold"
      ? this.sameElements(set.items, [other])
      : this.sameElements([other], set.items);
  }

  /** Every gold element matches some predicted one and vice versa (order and repeats ignored). */
  private sameElements(gold: readonly MathNode[], pred: readonly MathNode[]): boolean {
    const missing = gold.find((g) => !pred.some((p) => this.agrees(g, p)));
    if (missing) return this.no(`gold element ${show(missing)} has no match in the prediction`);
    const extra = pred.find((p) => !gold.some((g) => this.agrees(g, p)));
    if (extra) return this.no(`predicted element ${show(extra)} is not in the gold answer`);
    return this.ok("same elements");
  }

  private intervals(gold: MathNode, pred: MathNode): boolean {
    const g = asInterval(gold);
    const p = asInterval(pred);
    if (!g || !p) return this.no(`${describe(gold)} and ${describe(pred)} have different shapes`);
    if (g.loClosed !== p.loClosed || g.hiClosed !== p.hiClosed) {
      return this.no(`intervals ${show(g)} and ${show(p)} differ in open/closed ends`);
    }
    return this.values(g.lo, p.lo) && this.values(g.hi, p.hi) && this.ok("equal intervals");
  }

  private relations(gold: Relation, pred: Relation): boolean {
    const gEq = gold.ops.every((o) => o === "=");
    const pEq = pred.ops.every((o) => o === "=");
    if (gEq && pEq) {
      // Two assignments agree when they name the same thing and give it the same value:
      // `x = 3` is not `y = 3` (Math-Verify compares them as equations, `x - 3` vs `y - 3`).
      const g = assignment(gold);
      const p = assignment(pred);
      const sameTarget = g && p &&
        (this.agrees(g.target, p.target) || sameFunctionOfDummies(g.target, p.target));
      if (sameTarget && this.compare(g.value, p.value)) return true;
      return this.proportional(
        difference(gold, 0, gold.sides.length - 1),
        difference(pred, 0, pred.sides.length - 1),
        "any",
      ) ||
        this.no(`equations ${show(gold)} and ${show(pred)} are not multiples of each other`);
    }
    if (gold.ops.every((o) => o === "!=") && pred.ops.every((o) => o === "!=")) {
      return this.proportional(difference(gold, 0, 1), difference(pred, 0, 1), "any");
    }
    const g = inequalityPairs(gold);
    const p = inequalityPairs(pred);
    if (g && p && g.length === p.length) {
      const matches = (order: typeof p) =>
        g.every((a, i) =>
          a.strict === order[i].strict && this.proportional(a.diff, order[i].diff, "positive")
        );
      if (matches(p) || matches([...p].reverse())) return this.ok("equivalent inequalities");
    }
    const gs = relationToSet(gold);
    const ps = relationToSet(pred);
    if (gs && ps) return this.compare(gs, ps);
    return this.no(`relations ${show(gold)} and ${show(pred)} differ`);
  }

  /** d1 = c * d2 for one constant c (nonzero; positive when `sign` says so) at every sample. */
  private proportional(d1: MathNode, d2: MathNode, sign: "any" | "positive"): boolean {
    const samples = this.sample(d1, d2);
    if (!samples) return false;
    let ratio: number | undefined;
    for (const [a, b] of samples) {
      if (typeof a !== "number" || typeof b !== "number") return false;
      const zeroA = Math.abs(a) < 1e-12;
      const zeroB = Math.abs(b) < 1e-12;
      if (zeroA || zeroB) {
        if (zeroA !== zeroB) return false;
        continue;
      }
      const r = a / b;
      if (ratio === undefined) ratio = r;
      else if (Math.abs(r - ratio) > 1e-8 * Math.max(1, Math.abs(ratio))) return false;
    }
    if (ratio !== undefined && sign === "positive" && ratio < 0) return false;
    return this.ok("equivalent relations");
  }

  /** Both sides evaluated at the same sample points; null when either has no numeric value. */
  private sample(a: MathNode, b: MathNode): [Value, Value][] | null {
    const names = freeSymbols(b, freeSymbols(a));
    const points = names.length === 0 ? 1 : SAMPLE_POINTS;
    const out: [Value, Value][] = [];
    try {
      for (let j = 0; j < points; j++) {
        const env = new Map(names.map((name, i) => [name, samplePoint(i, j)]));
        out.push([evaluate(a, env), evaluate(b, env)]);
      }
    } catch (err) {
      if (err instanceof NotNumericError) return null;
      throw err;
    }
    return out;
  }

  private values(gold: MathNode, pred: MathNode): boolean {
    const samples = this.sample(gold, pred);
    if (!samples) {
      return this.no(`${describe(gold)} and ${describe(pred)} cannot be compared numerically`);
    }
    const symbolic = samples.length > 1;
    let valid = 0;
    for (const [a, b] of samples) {
      if (bothNaN(a, b)) continue;
      if (!valuesClose(a, b, symbolic ? null : this.options.floatRounding)) {
        return this.no(
          `${show(gold)} and ${show(pred)} differ` + (symbolic ? " at a sample point" : ""),
        );
      }
      valid++;
    }
    if (valid === 0) return this.no(`${show(gold)} and ${show(pred)} have no defined value`);
    return this.ok(symbolic ? `equal at ${valid} sample points` : "numerically equal");
  }
}

/** Deterministic generic sample values in (0.5, 2.5), distinct per variable and point. */
function samplePoint(variable: number, point: number): number {
  const s = Math.sin((variable + 1) * 12.9898 + (point + 1) * 78.233) * 43758.5453;
  return 0.5 + 2 * (s - Math.floor(s));
}

function bothNaN(a: Value, b: Value): boolean {
  return typeof a === "number" && typeof b === "number" && Number.isNaN(a) && Number.isNaN(b);
}

function valuesClose(a: Value, b: Value, rounding: number | null): boolean {
  if (typeof a === "number" && typeof b === "number") return numbersClose(a, b, rounding);
  if (typeof a === "number" || typeof b === "number") return false;
  return a.length === b.length &&
    a.every((row, i) =>
      row.length === b[i].length && row.every((x, j) => numbersClose(x, b[i][j], rounding))
    );
}

function numbersClose(a: number, b: number, rounding: number | null): boolean {
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  if (Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b))) return true;
  if (rounding === null) return false;
  const scale = 10 ** rounding;
  return Math.round(a * scale) === Math.round(b * scale);
}

/** Membership reads as its set; `\pm` expands to the set of its variants. */
function prepare(n: MathNode): MathNode {
  if (n.kind === "member") return prepare(n.set);
  const variants = expandPm(n);
  return variants.length === 1
    ? variants[0]
    : node({ kind: "set", items: Object.freeze(variants) });
}

/** The variants of a tree with `\pm`: breadth-first, at most MAX_PM_VARIANTS of them. */
function expandPm(n: MathNode): MathNode[] {
  const done: MathNode[] = [];
  const queue = [n];
  // Each expansion adds one node net, so this bounds the work even for hundreds of `\pm`.
  for (let steps = 0; queue.length > 0 && done.length < MAX_PM_VARIANTS; steps++) {
    const current = queue.shift()!;
    const path = findPm(current);
    if (!path) {
      done.push(current);
      continue;
    }
    if (steps > 4 * MAX_PM_VARIANTS) break;
    const pm = path.target as Extract<MathNode, { kind: "pm" }>;
    const plus = pm.left ? node({ kind: "add", terms: [pm.left, pm.right] }) : pm.right;
    const minus = pm.left
      ? node({ kind: "add", terms: [pm.left, node({ kind: "neg", arg: pm.right })] })
      : node({ kind: "neg", arg: pm.right });
    // Written order, as latex2sympy2's `convert_element` lists them: `\pm 2` is -2, 2 and
    // `1 \pm 2` is 1 + 2, 1 - 2 (a predicted list is compared in its written order).
    if (pm.left) queue.push(path.replace(plus), path.replace(minus));
    else queue.push(path.replace(minus), path.replace(plus));
  }
  return done.length > 0 ? done : [n];
}

interface PmPath {
  readonly target: MathNode;
  readonly replace: (m: MathNode) => MathNode;
}

/** Finds the first `pm` node and a function rebuilding the tree with it replaced. */
function findPm(n: MathNode): PmPath | null {
  if (n.kind === "pm") return { target: n, replace: (m) => m };
  const rebuild = (list: readonly MathNode[], make: (l: MathNode[]) => MathNode): PmPath | null => {
    for (let i = 0; i < list.length; i++) {
      const inner = findPm(list[i]);
      if (inner) {
        return {
          target: inner.target,
          replace: (m: MathNode) => make(list.map((x, j) => (j === i ? inner.replace(m) : x))),
        };
      }
    }
    return null;
  };
  switch (n.kind) {
    case "add":
      return rebuild(n.terms, (terms) => node({ kind: "add", terms }));
    case "mul":
      return rebuild(n.factors, (factors) => node({ kind: "mul", factors }));
    case "div":
      return rebuild([n.num, n.den], ([a, b]) => node({ kind: "div", num: a, den: b }));
    case "neg":
      return rebuild([n.arg], ([a]) => node({ kind: "neg", arg: a }));
    case "relation":
      return rebuild(n.sides, (sides) => node({ ...n, sides }));
    case "tuple":
      return rebuild(n.items, (items) => node({ kind: "tuple", items }));
    default:
      return null;
  }
}

/**
 * `W(n)` and `W(x)`: one named function of bare variables. Its arguments are dummies, so
 * `W(n) = 1` names what `W(x) = 1` names (test_numina_cases: `W(n) = 1 and W(n) = -1` matches
 * `W(x)=1 or W(x)=-1`).
 */
function sameFunctionOfDummies(a: MathNode, b: MathNode): boolean {
  return a.kind === "call" && b.kind === "call" && a.name === b.name &&
    a.args.length === b.args.length && [...a.args, ...b.args].every((x) => x.kind === "sym");
}

function isReals(n: MathNode): boolean {
  return n.kind === "const" && n.name === "reals";
}

function isSetLike(n: MathNode): boolean {
  return n.kind === "interval" || n.kind === "union" ||
    (n.kind === "tuple" && n.items.length === 2) ||
    (n.kind === "const" && n.name === "reals");
}

function asInterval(n: MathNode): Interval | null {
  if (n.kind === "interval") return n;
  if (n.kind === "tuple" && n.items.length === 2) {
    return node({
      kind: "interval",
      lo: n.items[0],
      hi: n.items[1],
      loClosed: false,
      hiClosed: false,
    });
  }
  if (n.kind === "const" && n.name === "reals") {
    return node({ kind: "interval", lo: NEG_INF, hi: INF, loClosed: false, hiClosed: false });
  }
  return null;
}

function difference(r: Relation, i: number, j: number): MathNode {
  return node({ kind: "add", terms: [r.sides[i], node({ kind: "neg", arg: r.sides[j] })] });
}

/** Each link `a op b` of a chain as `diff < 0` or `diff <= 0`. */
function inequalityPairs(r: Relation): { diff: MathNode; strict: boolean }[] | null {
  const out: { diff: MathNode; strict: boolean }[] = [];
  for (let i = 0; i < r.ops.length; i++) {
    const op = r.ops[i];
    if (op === "<" || op === "<=") out.push({ diff: difference(r, i, i + 1), strict: op === "<" });
    else if (op === ">" || op === ">=") {
      out.push({ diff: difference(r, i + 1, i), strict: op === ">" });
    } else return null;
  }
  return out;
}

/** Renames free symbols to `_v0`, `_v1`... in order of appearance (non-strict comparison). */
function renameVariables(n: MathNode): MathNode {
  const names = freeSymbols(n);
  const map = new Map(names.map((name, i) => [name, `_v${i}`]));
  const walk = (m: MathNode): MathNode => {
    if (m.kind === "sym") return node({ kind: "sym", name: map.get(m.name) ?? m.name });
    const out: Record<string, unknown> = { ...m };
    for (const [k, v] of Object.entries(m)) {
      if (Array.isArray(v)) {
        out[k] = v.map((
          x,
        ) => (Array.isArray(x) ? x.map((y: MathNode) => walk(y)) : isNode(x) ? walk(x) : x));
      } else if (isNode(v)) out[k] = walk(v);
    }
    if (m.kind === "bigop") out.variable = map.get(m.variable) ?? m.variable;
    return node(out as MathNode);
  };
  return walk(n);
}

function isNode(x: unknown): x is MathNode {
  return typeof x === "object" && x !== null && "kind" in x;
}
