/**
 * Tokens of a normalized answer string (see `latex-normalize.ts`): numbers, single letters,
 * commands, punctuation, relation operators, matrix environment markers and `\text{}` words.
 *
 * @example
 * ```ts
 * tokenize("x \\geq 5").map((t) => t.value); // ["x", ">=", "5"]
 * ```
 */

/** One token; `value` is the number text, letter, command name (no backslash) or symbol. */
export interface Token {
  readonly type: "num" | "letter" | "cmd" | "punct" | "rel" | "text" | "begin" | "end" | "rowsep";
  readonly value: string;
}

/** Raised for input the tokenizer cannot read; carries the offset. */
export class AnswerSyntaxError extends Error {
  override name = "AnswerSyntaxError";
  constructor(message: string, readonly input: string) {
    super(
      `${message} in ${JSON.stringify(input.length > 80 ? input.slice(0, 77) + "..." : input)}`,
    );
  }
}

const RELATION_COMMANDS: Record<string, string> = {
  le: "<=",
  leq: "<=",
  leqslant: "<=",
  ge: ">=",
  geq: ">=",
  geqslant: ">=",
  lt: "<",
  gt: ">",
  ne: "!=",
  neq: "!=",
  in: "in",
};

/** Reads a balanced `{...}` group starting at `open` (the index of `{`); returns its end. */
export function matchBrace(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    if (s[i] === "\\") {
      i++;
      continue;
    }
    if (s[i] === "{") depth++;
    else if (s[i] === "}" && --depth === 0) return i;
  }
  return -1;
}

/** Tokenizes a normalized answer string. */
export function tokenize(s: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(s[i + 1] ?? ""))) {
      const m = /^\d*\.?\d+|^\d+/.exec(s.slice(i))!;
      out.push({ type: "num", value: m[0] });
      i += m[0].length;
      continue;
    }
    if (/[a-zA-Z]/.test(c)) {
      out.push({ type: "letter", value: c });
      i++;
      continue;
    }
    if (c === "\\") {
      const next = s[i + 1];
      if (next === "\\") {
        out.push({ type: "rowsep", value: "\\\\" });
        i += 2;
        continue;
      }
      if (next === "{" || next === "}" || next === "|") {
        out.push({ type: "punct", value: next === "|" ? "||" : "\\" + next });
        i += 2;
        continue;
      }
      if (next === "%") {
        out.push({ type: "punct", value: "%" });
        i += 2;
        continue;
      }
      const m = /^[a-zA-Z]+/.exec(s.slice(i + 1));
      if (!m) {
        i += 2; // an escaped symbol we do not need, e.g. `\#`
        continue;
      }
      const name = m[0];
      i += 1 + name.length;
      if (name in RELATION_COMMANDS) {
        out.push({ type: "rel", value: RELATION_COMMANDS[name] });
      } else if (name === "text") {
        const open = s.indexOf("{", i);
        if (open < 0 || s.slice(i, open).trim() !== "") {
          throw new AnswerSyntaxError("\\text without a {group}", s);
        }
        const close = matchBrace(s, open);
        if (close < 0) throw new AnswerSyntaxError("unclosed \\text{", s);
        out.push({ type: "text", value: s.slice(open + 1, close).trim() });
        i = close + 1;
      } else if (name === "begin" || name === "end") {
        const m2 = /^\s*\{([a-zA-Z*]+)\}/.exec(s.slice(i));
        if (!m2) throw new AnswerSyntaxError(`\\${name} without an environment name`, s);
        out.push({ type: name, value: m2[1] });
        i += m2[0].length;
      } else {
        out.push({ type: "cmd", value: name });
      }
      continue;
    }
    const two = s.slice(i, i + 2);
    if (two === ">=" || two === "<=" || two === "!=" || two === "=>" || two === "=<") {
      out.push({ type: "rel", value: two === "=>" ? ">=" : two === "=<" ? "<=" : two });
      i += 2;
      continue;
    }
    if (c === "=" || c === "<" || c === ">") {
      out.push({ type: "rel", value: c });
      i++;
      continue;
    }
    if ("+-*/^_()[]{},;|!:&'%".includes(c)) {
      out.push({ type: "punct", value: c });
      i++;
      continue;
    }
    if (c === "≤" || c === "≥" || c === "≠") {
      out.push({ type: "rel", value: c === "≤" ? "<=" : c === "≥" ? ">=" : "!=" });
      i++;
      continue;
    }
    if (c === "π") {
      out.push({ type: "cmd", value: "pi" });
      i++;
      continue;
    }
    if (c === "∞") {
      out.push({ type: "cmd", value: "infty" });
      i++;
      continue;
    }
    if (c === "−") {
      out.push({ type: "punct", value: "-" });
      i++;
      continue;
    }
    throw new AnswerSyntaxError(`unexpected character ${JSON.stringify(c)}`, s);
  }
  return out;
}
