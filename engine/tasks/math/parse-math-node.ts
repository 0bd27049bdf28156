/**
 * Recursive-descent parser from an answer string (LaTeX or plain) to a `MathNode`. Top-level
 * comma lists become sets, `(a, b]` intervals, `(a, b)` tuples (compared as open intervals where
 * an interval is expected), `a \le x < b` relation chains, `x \in S` membership, `50\%` the
 * value 50/100. Top-level `;` separates solutions: `p=5,q=2;p=7,q=2` is the set of the two
 * tuples (latex2sympy2's `convert_elements_to_set_or_tuple`). Symbol names are lowercase, as
 * latex2sympy2 makes them (`lowercase_symbols`): `X` is `x`; function names keep their case.
 *
 * @example
 * ```ts
 * import { show } from "./ast.ts";
 * show(parseMathNode("\\frac{1}{3}"));      // "1/3"
 * show(parseMathNode("x \\in [-2, 7)"));    // "x in [-2, 7)"
 * ```
 */
import { KNOWN_FUNCTIONS, type MathNode, node, num, type RelationOp } from "./ast.ts";
import { normalizeLatex } from "./latex-normalize.ts";
import { AnswerSyntaxError, type Token, tokenize } from "./tokenize.ts";

/** Single letters that denote a function when written directly before `(`, as in `f(x)`. */
const FUNCTION_LETTERS = new Set("fghpqrFGHPQRWTS".split(""));
const MATRIX_ENVS = new Set([
  "pmatrix",
  "bmatrix",
  "Bmatrix",
  "vmatrix",
  "Vmatrix",
  "matrix",
  "smallmatrix",
  "array",
]);
const GREEK = new Set(
  ("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi " +
    "rho sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Sigma Phi Psi " +
    "Omega ell").split(" "),
);
/** Commands that decorate a symbol without changing what it is compared as. */
const DECORATIONS = new Set([
  "mathbf",
  "boldsymbol",
  "bm",
  "vec",
  "overrightarrow",
  "overline",
  "hat",
  "bar",
  "tilde",
  "mathit",
  "mathcal",
  "mathsf",
  "widehat",
  "dot",
]);
/** Binary-operator and relation-like commands: they never start an implicit product. */
const OPERATOR_COMMANDS = new Set([
  "cdot",
  "times",
  "ast",
  "div",
  "pm",
  "mp",
  "cup",
  "cap",
  "setminus",
  "to",
  "rightarrow",
  "Rightarrow",
  "implies",
  "iff",
  "equiv",
  "sim",
  "cong",
  "mid",
  "colon",
  "land",
  "lor",
  "wedge",
  "vee",
  "pmod",
  "bmod",
  "mod",
]);
const SEPARATOR_COMMANDS = new Set(["Rightarrow", "implies", "iff"]);

/** The expression tree (`MathNode`) of one answer, already extracted from its surrounding text. */
export function parseMathNode(answer: string): MathNode {
  const normalized = normalizeLatex(answer);
  if (normalized === "") throw new AnswerSyntaxError("empty answer", answer);
  return new Parser(tokenize(normalized), normalized).parseTop();
}

class Parser {
  private pos = 0;
  private matrixDepth = 0;
  private absDepth = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[], private readonly input: string) {}

  parseTop(): MathNode {
    const groups: MathNode[][] = [];
    do {
      const group = this.parseList((t) => t.type === "punct" && t.value === ";");
      if (group.length > 0) groups.push(group);
    } while (this.acceptPunct(";"));
    if (this.pos < this.tokens.length) {
      this.fail(`unexpected ${JSON.stringify(this.tokens[this.pos].value)}`);
    }
    if (groups.length === 0) this.fail("no expression");
    return solutions(groups);
  }

  private fail(message: string): never {
    throw new AnswerSyntaxError(message, this.input);
  }

  private skipLayout(): void {
    if (this.matrixDepth > 0) return;
    while (
      this.pos < this.tokens.length &&
      (this.tokens[this.pos].type === "rowsep" || this.tokens[this.pos].value === "&")
    ) this.pos++;
  }

  private peek(): Token | undefined {
    this.skipLayout();
    return this.tokens[this.pos];
  }

  private next(): Token {
    const t = this.peek();
    if (!t) this.fail("unexpected end");
    this.pos++;
    return t;
  }

  private isPunct(value: string): boolean {
    const t = this.peek();
    return t !== undefined && t.type === "punct" && t.value === value;
  }

  private acceptPunct(value: string): boolean {
    if (!this.isPunct(value)) return false;
    this.pos++;
    return true;
  }

  private isCmd(...names: string[]): boolean {
    const t = this.peek();
    return t !== undefined && t.type === "cmd" && names.includes(t.value);
  }

  private expectPunct(value: string): void {
    const t = this.next();
    if (t.type !== "punct" || t.value !== value) {
      this.fail(`expected ${JSON.stringify(value)}, got ${JSON.stringify(t.value)}`);
    }
  }

  private isSeparator(): boolean {
    const t = this.peek();
    if (!t) return false;
    if (t.type === "punct") return t.value === "," || t.value === ";";
    if (t.type === "cmd") return SEPARATOR_COMMANDS.has(t.value);
    return t.type === "text" && /^(?:and|or|,)?$/i.test(t.value);
  }

  /** Items separated by `,`/`;`/connectors until `stop` (not consumed) or the end. */
  private parseList(stop: (t: Token) => boolean): MathNode[] {
    const items: MathNode[] = [];
    for (;;) {
      while (this.isSeparator() && !stop(this.peek()!)) this.pos++;
      const t = this.peek();
      if (!t || stop(t)) return items;
      items.push(this.parseItem());
      const after = this.peek();
      if (after && !stop(after) && !this.isSeparator()) {
        this.fail(`unexpected ${JSON.stringify(after.value)}`);
      }
    }
  }

  private parseItem(): MathNode {
    if (++this.depth > 200) this.fail("nesting deeper than 200");
    try {
      const first = this.parseSetExpr();
      const sides = [first];
      const ops: RelationOp[] = [];
      for (let t = this.peek(); t?.type === "rel"; t = this.peek()) {
        this.pos++;
        if (t.value === "in") {
          return node({ kind: "member", elem: first, set: this.parseSetExpr() });
        }
        ops.push(t.value as RelationOp);
        sides.push(this.parseSetExpr());
      }
      return ops.length === 0
        ? first
        : node({ kind: "relation", ops: Object.freeze(ops), sides: Object.freeze(sides) });
    } finally {
      this.depth--;
    }
  }

  private parseSetExpr(): MathNode {
    let left = this.parseAdditive();
    while (this.isCmd("cup", "cap", "setminus")) {
      const op = this.next().value;
      const right = this.parseAdditive();
      if (op === "cup") {
        const parts = left.kind === "union" ? [...left.parts, right] : [left, right];
        left = node({ kind: "union", parts: Object.freeze(parts) });
      } else {
        left = node({ kind: "call", name: op, args: Object.freeze([left, right]) });
      }
    }
    return left;
  }

  private parseAdditive(): MathNode {
    let acc = this.parseTerm(false);
    for (;;) {
      if (this.isPunct("+") || this.isPunct("-")) {
        const minus = this.next().value === "-";
        const t = this.parseTerm(false);
        const term = minus ? node({ kind: "neg", arg: t }) : t;
        const terms = acc.kind === "add" ? [...acc.terms, term] : [acc, term];
        acc = node({ kind: "add", terms: Object.freeze(terms) });
      } else if (this.isCmd("pm", "mp")) {
        this.pos++;
        acc = node({ kind: "pm", left: acc, right: this.parseTerm(false) });
      } else return acc;
    }
  }

  /** A product; `stopAtFunction` ends it before `\sin` etc. (the argument of `\cos a \sin b`). */
  private parseTerm(stopAtFunction: boolean): MathNode {
    let acc = this.parseUnary();
    for (;;) {
      const t = this.peek();
      if (!t) return acc;
      if (
        (t.type === "punct" && t.value === "*") ||
        (t.type === "cmd" && /^(?:cdot|times|ast)$/.test(t.value))
      ) {
        this.pos++;
        acc = mul(acc, this.parseUnary());
      } else if (
        (t.type === "punct" && (t.value === "/" || t.value === ":")) ||
        (t.type === "cmd" && t.value === "div")
      ) {
        this.pos++;
        acc = node({ kind: "div", num: acc, den: this.parseUnary() });
      } else if (t.type === "text" && !isValueText(t.value)) {
        // A unit after a value (`15\text{ cm}^2`, `\frac13 \text{meters}`) is not compared.
        this.pos++;
        if (this.isPunct("^")) {
          this.pos++;
          this.parseScript();
        }
      } else if (this.startsImplicitFactor(t, stopAtFunction)) {
        acc = mul(acc, this.parsePower());
      } else return acc;
    }
  }

  private startsImplicitFactor(t: Token, stopAtFunction: boolean): boolean {
    switch (t.type) {
      case "num":
      case "letter":
      case "begin":
        return true;
      case "text":
        return isValueText(t.value);
      case "cmd":
        if (OPERATOR_COMMANDS.has(t.value)) return false;
        return !(stopAtFunction && KNOWN_FUNCTIONS.has(functionName(t.value)));
      case "punct":
        return t.value === "(" || t.value === "{" || t.value === "\\{" ||
          (t.value === "|" && this.absDepth === 0);
      default:
        return false;
    }
  }

  private parseUnary(): MathNode {
    if (this.isPunct("-")) {
      this.pos++;
      const arg = this.parseUnary();
      return arg.kind === "num" ? num(-arg.value) : node({ kind: "neg", arg });
    }
    if (this.isPunct("+")) {
      this.pos++;
      return this.parseUnary();
    }
    if (this.isCmd("pm", "mp")) {
      this.pos++;
      return node({ kind: "pm", left: null, right: this.parseUnary() });
    }
    return this.parsePower();
  }

  private parsePower(): MathNode {
    const base = this.parsePostfix();
    if (!this.isPunct("^")) return base;
    this.pos++;
    const exp = this.parseScript();
    let out: MathNode = node({ kind: "pow", base, exp });
    while (this.isPunct("!")) {
      this.pos++;
      out = node({ kind: "factorial", arg: out });
    }
    return out;
  }

  /** The argument of `^` or `_`: a `{group}`, a signed token, or one primary. */
  private parseScript(): MathNode {
    if (this.isPunct("{")) {
      this.pos++;
      const inner = this.parseGroupBody("}");
      return inner;
    }
    if (this.isPunct("-")) {
      this.pos++;
      const arg = this.parseScript();
      return arg.kind === "num" ? num(-arg.value) : node({ kind: "neg", arg });
    }
    return this.parsePostfix();
  }

  private parsePostfix(): MathNode {
    let p = this.parsePrimary();
    for (;;) {
      if (this.isPunct("!")) {
        this.pos++;
        p = node({ kind: "factorial", arg: p });
      } else if (this.acceptPunct("%")) {
        p = node({ kind: "div", num: p, den: num(100) });
      } else if (this.isPunct("'") && (p.kind === "sym" || p.kind === "call")) {
        this.pos++;
        p = p.kind === "sym"
          ? node({ kind: "sym", name: p.name + "'" })
          : node({ kind: "call", name: p.name + "'", args: p.args });
      } else return p;
    }
  }

  /** Group body up to `close` (consumed): one item stays itself, several become a set. */
  private parseGroupBody(close: string): MathNode {
    const items = this.parseList((t) => t.type === "punct" && t.value === close);
    this.expectPunct(close);
    if (items.length === 0) return node({ kind: "set", items: Object.freeze([]) });
    return items.length === 1 ? items[0] : node({ kind: "set", items: Object.freeze(items) });
  }

  /** Raw text of a subscript, used as part of a symbol's name (`a_{37}` is the symbol a_37). */
  private subscriptName(): string {
    if (this.isPunct("{")) {
      this.pos++;
      let depth = 1;
      let text = "";
      while (depth > 0) {
        const t = this.next();
        if (t.type === "punct" && t.value === "{") depth++;
        if (t.type === "punct" && t.value === "}" && --depth === 0) break;
        text += t.type === "cmd" ? `\\${t.value} ` : t.value;
      }
      return text.trim();
    }
    const t = this.next();
    return t.type === "cmd" ? `\\${t.value}` : t.value;
  }

  private parsePrimary(): MathNode {
    const t = this.next();
    switch (t.type) {
      case "num":
        return num(Number(t.value));
      case "letter":
        return this.identifier(t.value);
      case "text":
        return this.textValue(t.value);
      case "begin":
        return this.environment(t.value);
      case "cmd":
        return this.command(t.value);
      case "punct":
        return this.bracket(t.value);
      default:
        this.fail(`unexpected ${JSON.stringify(t.value)}`);
    }
  }

  private identifier(letter: string): MathNode {
    let name = letter;
    if (this.isPunct("_")) {
      this.pos++;
      name = `${letter}_${this.subscriptName()}`;
    }
    if (name === "e") return node({ kind: "const", name: "e" });
    if (this.isPunct("(") && FUNCTION_LETTERS.has(letter)) {
      this.pos++;
      const args = this.parseList((t) => t.type === "punct" && t.value === ")");
      this.expectPunct(")");
      return node({ kind: "call", name, args: Object.freeze(args) });
    }
    return symbol(name);
  }

  private textValue(value: string): MathNode {
    // latex2sympy2 reads `\text{(B)}` as the symbol B: spaces and parentheses in text drop out.
    const letter = value.replace(/[\s()]/g, "");
    if (/^[a-zA-Z]$/.test(letter)) return this.identifier(letter);
    if (isValueText(value)) return parseMathNode(value);
    return node({ kind: "text", value });
  }

  private environment(env: string): MathNode {
    if (!MATRIX_ENVS.has(env)) this.fail(`unsupported environment ${env}`);
    if (env === "array" && this.isPunct("{")) this.subscriptName(); // column spec
    this.matrixDepth++;
    const rows: MathNode[][] = [];
    let row: MathNode[] = [];
    for (;;) {
      const t = this.peek();
      if (!t) this.fail(`unclosed ${env}`);
      if (t.type === "end") {
        this.pos++;
        if (row.length > 0) rows.push(row);
        break;
      }
      if (t.type === "rowsep") {
        this.pos++;
        if (row.length > 0) rows.push(row);
        row = [];
        continue;
      }
      if (t.value === "&" && t.type === "punct") {
        this.pos++;
        continue;
      }
      row.push(this.parseItem());
    }
    this.matrixDepth--;
    const matrix = node({ kind: "matrix", rows: Object.freeze(rows.map((r) => Object.freeze(r))) });
    return env === "vmatrix" ? node({ kind: "call", name: "det", args: [matrix] }) : matrix;
  }

  private command(name: string): MathNode {
    switch (name) {
      case "frac":
      case "over": {
        const n = this.parseScript();
        const d = this.parseScript();
        return node({ kind: "div", num: n, den: d });
      }
      case "binom":
        return node({
          kind: "call",
          name: "binom",
          args: [this.parseScript(), this.parseScript()],
        });
      case "sqrt": {
        if (this.isPunct("[")) {
          this.pos++;
          const index = this.parseGroupBody("]");
          return node({ kind: "call", name: "root", args: [this.parseScript(), index] });
        }
        return node({ kind: "call", name: "sqrt", args: [this.parseScript()] });
      }
      case "pi":
        return node({ kind: "const", name: "pi" });
      case "infty":
      case "infinity":
      case "inf":
        return node({ kind: "const", name: "inf" });
      case "emptyset":
      case "varnothing":
        return node({ kind: "set", items: Object.freeze([]) });
      case "mathbb": {
        const letter = this.subscriptName();
        return letter === "R"
          ? node({ kind: "const", name: "reals" })
          : node({ kind: "sym", name: `mathbb_${letter}` });
      }
      case "dots":
      case "ldots":
      case "cdots":
        return node({ kind: "ellipsis" });
      case "sum":
      case "prod":
        return this.bigOperator(name);
      case "lfloor":
      case "lceil":
        return this.delimited(name === "lfloor" ? "rfloor" : "rceil", name.slice(1));
    }
    if (DECORATIONS.has(name)) {
      const inner = this.parseScript();
      return inner.kind === "sym" ? symbol(`${name}(${inner.name})`) : inner;
    }
    const fn = functionName(name);
    if (KNOWN_FUNCTIONS.has(fn)) return this.functionCall(fn);
    if (GREEK.has(name)) return this.identifierNamed(name);
    if (OPERATOR_COMMANDS.has(name)) this.fail(`operator \\${name} without a left operand`);
    return this.identifierNamed(name);
  }

  private identifierNamed(name: string): MathNode {
    if (this.isPunct("_")) {
      this.pos++;
      return symbol(`${name}_${this.subscriptName()}`);
    }
    return symbol(name);
  }

  private delimited(closeCmd: string, fn: string): MathNode {
    const inner = this.parseAdditive();
    const t = this.next();
    if (t.type !== "cmd" || t.value !== closeCmd) this.fail(`expected \\${closeCmd}`);
    return node({ kind: "call", name: fn, args: [inner] });
  }

  private bigOperator(op: "sum" | "prod"): MathNode {
    let variable = "k";
    let lo: MathNode = num(0);
    let hi: MathNode = node({ kind: "const", name: "inf" });
    for (let i = 0; i < 2; i++) {
      if (this.isPunct("_")) {
        this.pos++;
        const sub = this.parseScript();
        if (sub.kind === "relation" && sub.sides[0].kind === "sym") {
          variable = sub.sides[0].name;
          lo = sub.sides[sub.sides.length - 1];
        } else lo = sub;
      } else if (this.isPunct("^")) {
        this.pos++;
        hi = this.parseScript();
      }
    }
    const body = this.parseTerm(false);
    return node({ kind: "bigop", op, variable, lo, hi, body });
  }

  private functionCall(name: string): MathNode {
    let power: MathNode | null = null;
    let base: MathNode | null = null;
    for (let i = 0; i < 2; i++) {
      if (this.isPunct("^")) {
        this.pos++;
        power = this.parseScript();
      } else if (this.isPunct("_")) {
        this.pos++;
        base = this.parseScript();
      }
    }
    let arg: MathNode;
    if (this.isPunct("(")) {
      this.pos++;
      arg = this.parseGroupBody(")");
    } else arg = this.parseTerm(true);
    const args = base ? [arg, base] : [arg];
    const call = node({ kind: "call", name, args: Object.freeze(args) });
    // `\sin^{-1}` is the inverse function; any other power applies to the value.
    if (power && power.kind === "num" && power.value === -1) {
      return node({ kind: "call", name: `arc${name}`, args: Object.freeze(args) });
    }
    return power ? node({ kind: "pow", base: call, exp: power }) : call;
  }

  private bracket(open: string): MathNode {
    switch (open) {
      case "(":
      case "[": {
        const items = this.parseList((t) =>
          t.type === "punct" && (t.value === ")" || t.value === "]")
        );
        const close = this.next().value;
        if (items.length === 2 && (open === "[" || close === "]")) {
          return node({
            kind: "interval",
            lo: items[0],
            hi: items[1],
            loClosed: open === "[",
            hiClosed: close === "]",
          });
        }
        if (
          items.length === 1 && ((open === "(" && close === ")") || (open === "[" && close === "]"))
        ) {
          return items[0];
        }
        if (open === "(" && close === ")" && items.length > 1) {
          return node({ kind: "tuple", items: Object.freeze(items) });
        }
        return this.fail(`cannot read ${open}...${close} with ${items.length} items`);
      }
      case "{":
        return this.parseGroupBody("}");
      case "\\{": {
        const items = this.parseList((t) => t.type === "punct" && t.value === "\\}");
        this.expectPunct("\\}");
        return node({ kind: "set", items: Object.freeze(items) });
      }
      case "|": {
        this.absDepth++;
        const inner = this.parseAdditive();
        this.absDepth--;
        this.expectPunct("|");
        return node({ kind: "call", name: "abs", args: [inner] });
      }
      case "||": {
        const inner = this.parseAdditive();
        this.expectPunct("||");
        return node({ kind: "call", name: "norm", args: [inner] });
      }
      default:
        return this.fail(`unexpected ${JSON.stringify(open)}`);
    }
  }
}

/** A symbol; its name in lowercase, as latex2sympy2 names symbols. */
function symbol(name: string): MathNode {
  return node({ kind: "sym", name: name.toLowerCase() });
}

/**
 * One answer from its `;`-separated groups: one group is its item or the set of its items;
 * single-item groups are the set of those items; otherwise each group is one tuple.
 */
function solutions(groups: MathNode[][]): MathNode {
  const set = (items: MathNode[]) => node({ kind: "set", items: Object.freeze(items) });
  if (groups.length === 1) return groups[0].length === 1 ? groups[0][0] : set(groups[0]);
  return set(
    groups.map((g) => g.length === 1 ? g[0] : node({ kind: "tuple", items: Object.freeze(g) })),
  );
}

function mul(a: MathNode, b: MathNode): MathNode {
  const factors = a.kind === "mul" ? [...a.factors, b] : [a, b];
  return node({ kind: "mul", factors: Object.freeze(factors) });
}

/** `\arcsin` and `\operatorname{arcsin}` read the same; `\log` and `\lg` too. */
function functionName(cmd: string): string {
  return cmd === "lg" ? "log" : cmd;
}

/** Text that stands for a value (`\text{e}`, `\mathrm{e}`, `\text{5}`), not a word or unit. */
function isValueText(value: string): boolean {
  return /^(?:e|[+-]?\d+(?:\.\d+)?)$/.test(value.trim());
}
