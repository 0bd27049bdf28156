/**
 * Finds the final answer in a model output or a reference solution, in this order:
 * the sentence after the last "final answer" when no box follows it; the last `\boxed{}`
 * (joined with the boxes just before it when only connector words separate them:
 * `\boxed{1} and \boxed{2}`); the whole text when it is one plain number (`0,5`, `28 percent`)
 * or a bare expression; otherwise whichever comes last of the last LaTeX math segment
 * (`$..$`, `$$..$$`, `\(..\)`, `\[..\]`) and the last plain number (`plain-number.ts`).
 *
 * Inline math (`$..$`, `\(..\)`) stays on one line, as Math-Verify's `make_latex_env_pattern`
 * (parser.py) has it: an inline pair broken across lines is no math segment, and what it encloses
 * is not read as plain numbers either (test_all.py `test_latex_notation`: `Answer \( \n 9 \n \)`
 * has no answer). A percent sign or word right after the extracted segment (`$28$ %`,
 * `$\boxed{20}$ percent`) makes it a percentage, as the same pattern's `percent` group does.
 *
 * @example
 * ```ts
 * import { DEFAULT_GRADE_OPTIONS } from "./options.ts";
 * extractAnswer("so $x = 2$ and the area is $\\boxed{15}$.", DEFAULT_GRADE_OPTIONS);
 * // { answer: "15", source: "boxed", percent: false }
 * ```
 */
import { collapseDoubledBackslashes, normalizeLatex } from "./latex-normalize.ts";
import type { GradeOptions } from "./options.ts";
import { lastPlainNumber, type PlainNumber, wholePlainNumber } from "./plain-number.ts";
import { matchBrace } from "./tokenize.ts";

/** Where an extracted answer came from. */
export type AnswerSource = "boxed" | "final-answer" | "whole-text" | "latex" | "number";

/** An extracted answer string and how it was found. */
export interface Extraction {
  readonly answer: string;
  readonly source: AnswerSource;
  /** A percent sign or word followed the answer (outside it): its value is a hundredth. */
  readonly percent: boolean;
}

/** Which extractors run (`latexOnly` may be left out: both run). */
export type ExtractOptions =
  & Pick<GradeOptions, "plainOnly">
  & Partial<Pick<GradeOptions, "latexOnly">>;

interface Span {
  readonly start: number;
  readonly end: number;
  readonly content: string;
}

/** The math in a text, in reading order. */
interface MathScan {
  /** Delimited segments and bare `\frac{a}{b}` fractions. */
  readonly segments: Span[];
  /** Whether any segment has delimiters (`$`, `\(`, `\[`): then the text is no bare expression. */
  readonly delimited: boolean;
  /** Inline pairs broken across lines: no math, and not plain text either. */
  readonly broken: Span[];
}

/** At most this many words (outside commands) between boxes that belong to one answer. */
const MAX_CONNECTOR_WORDS = 4;
/** Longer texts are prose even without long words. */
const MAX_BARE_LENGTH = 20_000;
/** A bare `\frac{a}{b}` of plain numbers is math even outside delimiters (`latexFraction`). */
const BARE_FRACTION = /-?\\frac\{-?\d+(?:[.,]\d+)?\}\{-?\d+(?:[.,]\d+)?\}/g;
/** Math-Verify's percent suffix after a math segment (`make_latex_env_pattern`). */
const PERCENT_AFTER_MATH = /^\s*(?:\\?%|[Pp]ercent|[Pp]ct)/;

/** Extracts the answer, or null when the text has none. */
export function extractAnswer(text: string, options: ExtractOptions): Extraction | null {
  const t = collapseDoubledBackslashes(text);
  if (options.plainOnly) {
    const last = lastPlainNumber(t);
    return last ? numberAnswer(last, "number") : null;
  }
  const readsPlainText = !options.latexOnly;
  const math = scanMath(t);
  const boxes = findBoxes(t);
  const lastBox = boxes[boxes.length - 1];
  // A "final answer" sentence written after the last box supersedes it.
  const final = finalAnswer(t, lastBox?.end ?? -1, readsPlainText);
  if (final) return final;
  if (lastBox) {
    const joined = trailingSpans(t, boxes, boxConnector);
    // Math-Verify reads a percent after the math segment that holds the box, not after a bare box.
    const holder = math.segments.find((s) => s.start <= lastBox.start && lastBox.end <= s.end);
    const percent = joined.length === 1 && holder !== undefined && percentAfter(t, holder.end);
    return { answer: joinContents(joined), source: "boxed", percent };
  }
  if (readsPlainText) {
    const whole = wholePlainNumber(t);
    if (whole) return numberAnswer(whole, "number");
    if (!math.delimited && math.broken.length === 0 && isBareExpression(t)) {
      return { answer: t.trim(), source: "whole-text", percent: false };
    }
  }
  return lastMathOrNumber(t, math, readsPlainText);
}

function numberAnswer(n: PlainNumber, source: AnswerSource): Extraction {
  return { answer: n.answer, source, percent: n.percent };
}

function percentAfter(t: string, end: number): boolean {
  return PERCENT_AFTER_MATH.test(t.slice(end));
}

/** All `\boxed{...}` / `\fbox{...}` contents; an unclosed last box runs to the end. */
function findBoxes(t: string): Span[] {
  const out: Span[] = [];
  const re = /\\(?:boxed|fbox)\s*/g;
  for (let m = re.exec(t); m; m = re.exec(t)) {
    const open = m.index + m[0].length;
    if (t[open] !== "{") {
      const token = /^[^\s$]+/.exec(t.slice(open));
      if (token) out.push({ start: m.index, end: open + token[0].length, content: token[0] });
      continue;
    }
    const close = matchBrace(t, open);
    const end = close < 0 ? t.length : close;
    out.push({
      start: m.index,
      end: close < 0 ? t.length : close + 1,
      content: t.slice(open + 1, end),
    });
    re.lastIndex = close < 0 ? t.length : close + 1;
  }
  return out;
}

function boxConnector(gap: string): boolean {
  const words = gap.replace(/\\[a-zA-Z]+/g, " ").match(/[a-zA-Z]+/g) ?? [];
  return words.length <= MAX_CONNECTOR_WORDS && !/[.!?]\s/.test(gap);
}

function mathConnector(gap: string): boolean {
  return /^(?:\s|,|;|\\quad|\band\b|\bor\b)*$/.test(gap) && /\S/.test(gap);
}

/** The last span plus those before it separated only by connectors. */
function trailingSpans(t: string, spans: Span[], connector: (gap: string) => boolean): Span[] {
  let first = spans.length - 1;
  while (first > 0 && connector(t.slice(spans[first - 1].end, spans[first].start))) first--;
  return spans.slice(first);
}

/** Several spans read as one list. */
function joinContents(spans: Span[]): string {
  return spans.map((s) => s.content.trim()).join(", ");
}

/**
 * Math segments in reading order. Inline math (`$..$`, `\(..\)`) does not span a line break:
 * such a pair is a broken span instead. A lone `$` followed by its amount is a currency sign.
 * A bare `\frac{1}{2}` outside the segments is one too, even inside a broken span, as
 * Math-Verify's `latexFraction` pattern matches it anywhere.
 */
function scanMath(t: string): MathScan {
  const segments: Span[] = [];
  const broken: Span[] = [];
  const add = (start: number, end: number, open: number, close: number) => {
    const content = t.slice(start + open, end - close);
    const inline = open === 1 || t.startsWith("\\(", start);
    (inline && content.includes("\n") ? broken : segments).push({ start, end, content });
  };
  let i = 0;
  while (i < t.length) {
    if (t[i] === "\\" && (t[i + 1] === "[" || t[i + 1] === "(")) {
      const closer = t[i + 1] === "[" ? "\\]" : "\\)";
      const end = t.indexOf(closer, i + 2);
      if (end < 0) break;
      add(i, end + 2, 2, 2);
      i = end + 2;
    } else if (t[i] === "\\") {
      i += 2;
    } else if (t.startsWith("$$", i)) {
      const end = t.indexOf("$$", i + 2);
      if (end < 0) break;
      add(i, end + 2, 2, 2);
      i = end + 2;
    } else if (t[i] === "$") {
      // `$` then a line break opens math (a currency sign is followed by its amount).
      const end = /^[ \t]*\r?\n/.test(t.slice(i + 1))
        ? findDollarOpeningLine(t, i + 1)
        : findClosingDollar(t, i + 1);
      if (end < 0) {
        i++;
        continue;
      }
      if (t.slice(i + 1, end).trim() !== "") add(i, end + 1, 1, 1);
      i = end + 1;
    } else i++;
  }
  const delimited = segments.length > 0;
  for (const m of t.matchAll(BARE_FRACTION)) {
    const start = m.index!;
    if (!segments.some((s) => s.start <= start && start < s.end)) {
      segments.push({ start, end: start + m[0].length, content: m[0] });
    }
  }
  segments.sort((a, b) => a.start - b.start);
  return { segments, delimited, broken };
}

/** The `$` closing an inline segment on the same line, or -1. */
function findClosingDollar(t: string, from: number): number {
  for (let j = from; j < t.length; j++) {
    if (t[j] === "\\") j++;
    else if (t[j] === "\n") return -1;
    else if (t[j] === "$") return j;
  }
  return -1;
}

/**
 * For a `$` that ends its line: the next `$` when it starts a later line (`$ \n 9 \n $`), or -1
 * when another `$` comes first (that one opens or closes other math).
 */
function findDollarOpeningLine(t: string, from: number): number {
  for (let j = from; j < t.length; j++) {
    if (t[j] === "\\") j++;
    else if (t[j] === "$") return /(?:^|\n)[ \t]*$/.test(t.slice(0, j)) ? j : -1;
  }
  return -1;
}

/**
 * The answer stated after the last "final answer" (e.g. "The final answer is $7$."): its math,
 * else (when plain text is read) a plain number or bare expression.
 */
function finalAnswer(t: string, after: number, readsPlainText: boolean): Extraction | null {
  const matches = [...t.matchAll(/final answer/gi)];
  if (matches.length === 0) return null;
  const last = matches[matches.length - 1];
  if (last.index! < after) return null;
  let rest = t.slice(last.index! + last[0].length);
  const stop = rest.search(/I hope|<\||\n\s*\n/);
  if (stop >= 0) rest = rest.slice(0, stop);
  const segments = scanMath(rest).segments;
  const inMath = (k: number) => segments.some((s) => k >= s.start && k < s.end);
  let sentenceEnd = rest.length;
  for (let k = 0; k < rest.length; k++) {
    if (rest[k] === "." && !inMath(k) && (k + 1 === rest.length || /\s/.test(rest[k + 1]))) {
      // `Final Answer: The final answer is 7.78.` ends at the last period, not inside 7.78.
      if (/\S/.test(rest.slice(0, k).replace(/^[\s:]*/, ""))) {
        sentenceEnd = k;
        break;
      }
    }
  }
  let sentence = rest.slice(0, sentenceEnd);
  const isMatches = [...sentence.matchAll(/\bis\b/g)].filter((m) => !inMath(m.index!));
  if (isMatches.length > 0) {
    const m = isMatches[isMatches.length - 1];
    sentence = sentence.slice(m.index! + 2);
  }
  sentence = sentence.replace(/^[\s:]+/, "").trim();
  if (sentence === "") return null;
  const own = scanMath(sentence).segments;
  if (own.length > 0) return mathAnswer(sentence, own, "final-answer");
  if (!readsPlainText) return null;
  const whole = wholePlainNumber(sentence);
  if (whole) return numberAnswer(whole, "final-answer");
  if (isBareExpression(sentence)) {
    return { answer: sentence, source: "final-answer", percent: false };
  }
  const number = lastPlainNumber(sentence);
  return number ? numberAnswer(number, "final-answer") : null;
}

/** The last math segment with those joined to it by connectors; a percent after a lone one. */
function mathAnswer(t: string, segments: Span[], source: AnswerSource): Extraction {
  const joined = trailingSpans(t, segments, mathConnector);
  const percent = joined.length === 1 && percentAfter(t, joined[0].end);
  return { answer: joinContents(joined), source, percent };
}

/** Text with no prose words: `-10/9`, `x^2 + 1`, `W(x)=1orW(x)=-1`. */
function isBareExpression(t: string): boolean {
  if (t.length > MAX_BARE_LENGTH || t.trim() === "") return false;
  const prose = normalizeLatex(t)
    .replace(/\\text\s*\{[^{}]*\}/g, " ")
    .replace(/\\[a-zA-Z]+/g, " ")
    .match(/[a-zA-Z]{3,}/g);
  return prose === null;
}

/** Whichever ends later: the last math segment or the last plain number outside math. */
function lastMathOrNumber(t: string, math: MathScan, readsPlainText: boolean): Extraction | null {
  let number: PlainNumber | null = null;
  if (readsPlainText) {
    let masked = t;
    for (const s of [...math.segments, ...math.broken]) {
      masked = masked.slice(0, s.start) + " ".repeat(s.end - s.start) + masked.slice(s.end);
    }
    number = lastPlainNumber(masked);
  }
  const segment = math.segments[math.segments.length - 1];
  if (segment && (!number || segment.end > number.start)) {
    return mathAnswer(t, math.segments, "latex");
  }
  return number ? numberAnswer(number, "number") : null;
}
