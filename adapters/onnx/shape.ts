/**
 * Dimensions and shapes. A dim is a static size (a non-negative integer) or a symbolic name such
 * as "batch". Symbolic dims are equal only when their names are equal; products of symbols that a
 * Reshape with -1 creates are named by joining sorted factors with "*", e.g. "batch*seq".
 */
export type Dim = number | string;

/** A tensor shape: one dim per axis; [] is a scalar. */
export type Shape = readonly Dim[];

/** "[batch,4,1]" - the form used in every error message. */
export function formatShape(shape: Shape): string {
  return `[${shape.join(",")}]`;
}

/** True when every dim is a static number. */
export function isStatic(shape: Shape): shape is readonly number[] {
  return shape.every((d) => typeof d === "number");
}

/** Element count of a static shape, or undefined when any dim is symbolic. */
export function staticSize(shape: Shape): number | undefined {
  let n = 1;
  for (const d of shape) {
    if (typeof d !== "number") return undefined;
    n *= d;
  }
  return n;
}

/** Same rank and the same dim at every axis. */
export function sameShape(a: Shape, b: Shape): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/**
 * Resolves a possibly negative axis against `rank`, or returns undefined when it is out of range.
 */
export function normalizeAxis(axis: number, rank: number): number | undefined {
  const a = axis < 0 ? axis + rank : axis;
  return Number.isInteger(a) && a >= 0 && a < rank ? a : undefined;
}

/**
 * Numpy-style broadcast of two shapes, or a string saying why they do not broadcast. A symbolic
 * dim broadcasts only against itself or a static 1: the gradient must know at build time which
 * axes were stretched.
 */
export function broadcastShapes(a: Shape, b: Shape): Shape | string {
  const rank = Math.max(a.length, b.length);
  const out: Dim[] = [];
  for (let i = 0; i < rank; i++) {
    const da = i < rank - a.length ? 1 : a[i - (rank - a.length)];
    const db = i < rank - b.length ? 1 : b[i - (rank - b.length)];
    if (da === db || db === 1) out.push(da);
    else if (da === 1) out.push(db);
    else return `dims ${da} and ${db} at output axis ${i} do not broadcast`;
  }
  return out;
}

/** Splits a dim name into its top-level "*" factors (parenthesized groups stay whole). */
function factors(name: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of name) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "*" && depth === 0) {
      out.push(current);
      current = "";
    } else current += ch;
  }
  out.push(current);
  return out;
}

/** A dim name that can sit inside a product or a sum without changing its meaning. */
export function groupDim(d: Dim): string {
  const s = String(d);
  return /[*+-]/.test(s) ? `(${s})` : s;
}

/** The top-level factors of a dim: "batch*seq*2" gives ["batch", "seq", 2]. */
export function splitFactors(d: Dim): Dim[] {
  const { n, symbols } = splitDim(d);
  return n === 1 && symbols.length > 0 ? symbols : [...symbols, n];
}

/** A dim as a static factor and a sorted list of symbolic factors. */
function splitDim(d: Dim): { n: number; symbols: string[] } {
  if (typeof d === "number") return { n: d, symbols: [] };
  let n = 1;
  const symbols: string[] = [];
  for (const f of factors(d)) {
    if (/^\d+$/.test(f)) n *= Number(f);
    else symbols.push(/[+-]/.test(f) && !f.startsWith("(") ? `(${f})` : f);
  }
  return { n, symbols };
}

function joinDim(n: number, symbols: string[]): Dim {
  if (symbols.length === 0 || n === 0) return n;
  symbols.sort();
  return n === 1 ? symbols.join("*") : [...symbols, String(n)].join("*");
}

/** Product of dims as a dim: a number when all are static, else the canonical "a*b*3" name. */
export function dimProduct(dims: readonly Dim[]): Dim {
  let n = 1;
  const symbols: string[] = [];
  for (const d of dims) {
    const part = splitDim(d);
    n *= part.n;
    symbols.push(...part.symbols);
  }
  return joinDim(n, symbols);
}

/** `a / b` as a dim, or undefined when b does not divide a symbolically. */
export function dimQuotient(a: Dim, b: Dim): Dim | undefined {
  const x = splitDim(a);
  const y = splitDim(b);
  if (y.n === 0 || x.n % y.n !== 0) return undefined;
  const rest = [...x.symbols];
  for (const s of y.symbols) {
    const i = rest.indexOf(s);
    if (i < 0) return undefined;
    rest.splice(i, 1);
  }
  return joinDim(x.n / y.n, rest);
}
