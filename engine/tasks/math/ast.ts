/**
 * The answer syntax tree: frozen plain objects with a `kind`. Parsed from LaTeX or plain text by
 * `parse-math-node.ts`, compared by `equivalence.ts`.
 *
 * @example
 * ```ts
 * const half: MathNode = node({ kind: "div", num: num(1), den: num(2) });
 * ```
 */

/** Relation operators after normalization (`\geq`, `>=`, `\ge` all become ">="). */
export type RelationOp = "=" | "!=" | "<" | "<=" | ">" | ">=";

/** One node of a parsed answer. */
export type MathNode =
  | { readonly kind: "num"; readonly value: number }
  | { readonly kind: "sym"; readonly name: string }
  | { readonly kind: "const"; readonly name: "pi" | "e" | "inf" | "reals" }
  | { readonly kind: "add"; readonly terms: readonly MathNode[] }
  | { readonly kind: "mul"; readonly factors: readonly MathNode[] }
  | { readonly kind: "neg"; readonly arg: MathNode }
  | { readonly kind: "div"; readonly num: MathNode; readonly den: MathNode }
  | { readonly kind: "pow"; readonly base: MathNode; readonly exp: MathNode }
  | { readonly kind: "call"; readonly name: string; readonly args: readonly MathNode[] }
  | { readonly kind: "factorial"; readonly arg: MathNode }
  | { readonly kind: "pm"; readonly left: MathNode | null; readonly right: MathNode }
  | { readonly kind: "tuple"; readonly items: readonly MathNode[] }
  | {
    readonly kind: "interval";
    readonly lo: MathNode;
    readonly hi: MathNode;
    readonly loClosed: boolean;
    readonly hiClosed: boolean;
  }
  | { readonly kind: "set"; readonly items: readonly MathNode[] }
  | { readonly kind: "union"; readonly parts: readonly MathNode[] }
  | {
    readonly kind: "relation";
    readonly ops: readonly RelationOp[];
    readonly sides: readonly MathNode[];
  }
  | { readonly kind: "member"; readonly elem: MathNode; readonly set: MathNode }
  | { readonly kind: "matrix"; readonly rows: readonly (readonly MathNode[])[] }
  | { readonly kind: "text"; readonly value: string }
  | {
    readonly kind: "bigop";
    readonly op: "sum" | "prod";
    readonly variable: string;
    readonly lo: MathNode;
    readonly hi: MathNode;
    readonly body: MathNode;
  }
  | { readonly kind: "ellipsis" };

/** A relation chain node (`a < x \le b`, `x = 3`). */
export type Relation = Extract<MathNode, { kind: "relation" }>;
/** An interval node (`(a, b]`). */
export type Interval = Extract<MathNode, { kind: "interval" }>;

/** Freezes a node (shallow: children are frozen when they are built). */
export function node<N extends MathNode>(n: N): N {
  return Object.freeze(n);
}

/** A number node. */
export function num(value: number): MathNode {
  return node({ kind: "num", value });
}

/** Infinity and minus infinity, the open ends of one-sided intervals. */
export const INF: MathNode = node({ kind: "const", name: "inf" });
export const NEG_INF: MathNode = node({ kind: "neg", arg: INF });

/** Functions the evaluator knows; any other applied name is an uninterpreted function. */
export const KNOWN_FUNCTIONS: ReadonlySet<string> = new Set([
  "sin",
  "cos",
  "tan",
  "cot",
  "sec",
  "csc",
  "arcsin",
  "arccos",
  "arctan",
  "sinh",
  "cosh",
  "tanh",
  "ln",
  "log",
  "exp",
  "sqrt",
  "root",
  "abs",
  "floor",
  "ceil",
  "binom",
  "max",
  "min",
  "gcd",
  "lcm",
]);

/**
 * A short readable rendering of a node, used in grade results ("what was extracted") and as a
 * structural key. Not LaTeX: a plain infix form.
 *
 * @example
 * ```ts
 * show(node({ kind: "div", num: num(1), den: num(3) })); // "1/3"
 * ```
 */
export function show(n: MathNode): string {
  switch (n.kind) {
    case "num":
      return String(n.value);
    case "sym":
      return n.name;
    case "const":
      return { pi: "pi", e: "e", inf: "oo", reals: "R" }[n.name];
    case "add":
      return n.terms.map((t, i) => (i > 0 && t.kind !== "neg" ? "+" : "") + show(t)).join("");
    case "mul":
      return n.factors.map(showAtom).join("*");
    case "neg":
      return "-" + showAtom(n.arg);
    case "div":
      return `${showAtom(n.num)}/${showAtom(n.den)}`;
    case "pow":
      return `${showAtom(n.base)}^${showAtom(n.exp)}`;
    case "call":
      return `${n.name}(${n.args.map(show).join(", ")})`;
    case "factorial":
      return `${showAtom(n.arg)}!`;
    case "pm":
      return `${n.left ? show(n.left) : ""}±${showAtom(n.right)}`;
    case "tuple":
      return `(${n.items.map(show).join(", ")})`;
    case "interval":
      return `${n.loClosed ? "[" : "("}${show(n.lo)}, ${show(n.hi)}${n.hiClosed ? "]" : ")"}`;
    case "set":
      return `{${n.items.map(show).join(", ")}}`;
    case "union":
      return n.parts.map(show).join(" U ");
    case "relation":
      return n.sides.map((s, i) => (i > 0 ? ` ${n.ops[i - 1]} ` : "") + show(s)).join("");
    case "member":
      return `${show(n.elem)} in ${show(n.set)}`;
    case "matrix":
      return `[${n.rows.map((r) => r.map(show).join(", ")).join("; ")}]`;
    case "text":
      return JSON.stringify(n.value);
    case "bigop":
      return `${n.op}(${n.variable}=${show(n.lo)}..${show(n.hi)}, ${show(n.body)})`;
    case "ellipsis":
      return "...";
  }
}

function showAtom(n: MathNode): string {
  const s = show(n);
  return n.kind === "add" || n.kind === "relation" || n.kind === "div" || n.kind === "mul" ||
      n.kind === "neg" || (n.kind === "num" && n.value < 0)
    ? `(${s})`
    : s;
}
