/**
 * Finds the final answer in a model output or a reference solution, in this order:
 * the sentence after the last "final answer" when no box follows it; the last `\boxed{}`
 * (joined with the boxes just before it when only connector words separate them:
 * `\boxed{1} and \boxed{2}`); the whole text
 * when it is a bare expression; otherwise whichever comes last of the last LaTeX math segment
 * (`$..$`, `$$..$$`, `\(..\)`, `\[..\]`) and the last plain number.
 *
 * @example
 * ```ts
 * extractAnswer("so $x = 2$ and the area is $\\boxed{15}$.", DEFAULT_GRADE_OPTIONS);
 * // { answer: "15", source: "boxed" }
 * ```
 */
import { collapseDoubledBackslashes, normalizeLatex } from "./latex-normalize.ts";
import type { GradeOptions } from "./options.ts";
import { matchBrace } from "./tokenize.ts";

/** Where an extracted answer came from. */
export type AnswerSource = "boxed" | "final-answer" | "whole-text" | "latex" | "number";

/** An extracted answer string and how it was found. */
export interface Extraction {
  readonly answer: string;
  readonly source: AnswerSource;
}

interface Span {
  readonly start: number;
  readonly end: number;
  readonly content: string;
}

/** At most this many words (outside commands) between boxes that belong to one answer. */
const MAX_CONNECTOR_WORDS = 4;
/** Longer texts are prose even without long words. */
const MAX_BARE_LENGTH = 20_000;

/** Extracts the answer, or null when the text has none. */
export function extractAnswer(
  text: string,
  options: Pick<GradeOptions, "plainOnly">,
): Extraction | null {
  const t = collapseDoubledBackslashes(text);
  if (options.plainOnly) {
    const n = lastPlainNumber(t, true);
    return n ? { answer: n.content, source: "number" } : null;
  }
  const boxes = findBoxes(t);
  const lastBoxEnd = boxes.length > 0 ? boxes[boxes.length - 1].end : -1;
  // A "final answer" sentence written after the last box supersedes it.
  const final = finalAnswer(t, lastBoxEnd);
  if (final) return { answer: final, source: "final-answer" };
  if (boxes.length > 0) {
    return { answer: joinTrailing(t, boxes, boxConnector), source: "boxed" };
  }
  if (findMathSegments(t).length === 0 && isBareExpression(t)) {
    return { answer: t.trim(), source: "whole-text" };
  }
  return lastMathOrNumber(t);
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

/** The last span plus those before it separated only by connectors, as one list. */
function joinTrailing(t: string, spans: Span[], connector: (gap: string) => boolean): string {
  let first = spans.length - 1;
  while (first > 0 && connector(t.slice(spans[first - 1].end, spans[first].start))) first--;
  return spans.slice(first).map((s) => s.content.trim()).join(", ");
}

/** Math segments in reading order. A single `$` does not span a line break. */
export function findMathSegments(t: string): Span[] {
  const out: Span[] = [];
  let i = 0;
  while (i < t.length) {
    if (t[i] === "\\" && (t[i + 1] === "[" || t[i + 1] === "(")) {
      const closer = t[i + 1] === "[" ? "\\]" : "\\)";
      const end = t.indexOf(closer, i + 2);
      if (end < 0) break;
      out.push({ start: i, end: end + 2, content: t.slice(i + 2, end) });
      i = end + 2;
    } else if (t[i] === "\\") {
      i += 2;
    } else if (t.startsWith("$$", i)) {
      const end = t.indexOf("$$", i + 2);
      if (end < 0) break;
      out.push({ start: i, end: end + 2, content: t.slice(i + 2, end) });
      i = end + 2;
    } else if (t[i] === "$") {
      const end = findClosingDollar(t, i + 1);
      if (end < 0) {
        i++;
        continue;
      }
      if (t.slice(i + 1, end).trim() !== "") {
        out.push({ start: i, end: end + 1, content: t.slice(i + 1, end) });
      }
      i = end + 1;
    } else i++;
  }
  return out;
}

function findClosingDollar(t: string, from: number): number {
  for (let j = from; j < t.length; j++) {
    if (t[j] === "\\") j++;
    else if (t[j] === "\n") return -1;
    else if (t[j] === "$") return j;
  }
  return -1;
}

/** The answer stated after the last "final answer" (e.g. "The final answer is $7$."). */
function finalAnswer(t: string, after: number): string | null {
  const matches = [...t.matchAll(/final answer/gi)];
  if (matches.length === 0) return null;
  const last = matches[matches.length - 1];
  if (last.index! < after) return null;
  let rest = t.slice(last.index! + last[0].length);
  const stop = rest.search(/I hope|<\||\n\s*\n/);
  if (stop >= 0) rest = rest.slice(0, stop);
  const segments = findMathSegments(rest);
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
  const own = findMathSegments(sentence);
  if (own.length > 0) return joinTrailing(sentence, own, mathConnector);
  if (isBareExpression(sentence)) return sentence;
  return lastPlainNumber(sentence, false)?.content ?? null;
}

/** Text with no prose words: `-10/9`, `28 percent`, `W(x)=1orW(x)=-1`. */
function isBareExpression(t: string): boolean {
  if (t.length > MAX_BARE_LENGTH || t.trim() === "") return false;
  const prose = normalizeLatex(t)
    .replace(/\\text\s*\{[^{}]*\}/g, " ")
    .replace(/\\[a-zA-Z]+/g, " ")
    .match(/[a-zA-Z]{3,}/g);
  return prose === null;
}

function lastMathOrNumber(t: string): Extraction | null {
  const segments = findMathSegments(t);
  let masked = t;
  for (const s of segments) {
    masked = masked.slice(0, s.start) + " ".repeat(s.end - s.start) + masked.slice(s.end);
  }
  const number = lastPlainNumber(masked, false);
  const math = segments[segments.length - 1];
  if (math && (!number || math.end > number.start)) {
    return { answer: joinTrailing(t, segments, mathConnector), source: "latex" };
  }
  return number ? { answer: number.content, source: "number" } : null;
}

/**
 * The last number in plain text. `plainSpellings` also reads `1 000` (space thousands) and
 * `2,74` / `1000,99` (decimal comma), as plain-only grading of European-style output needs.
 */
function lastPlainNumber(t: string, plainSpellings: boolean): Span | null {
  const re = plainSpellings
    ? /(?<![\w.,])-?(?:\d{1,3}(?:[ ,]\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?)(?!\d|,\d)/g
    : /(?<![\w.,])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\/\d+)?(?!\d|,\d)/g;
  let last: RegExpExecArray | null = null;
  for (let m = re.exec(t); m; m = re.exec(t)) last = m;
  if (!last) return null;
  let content = last[0];
  if (plainSpellings) {
    content = /^-?\d{1,3}(?:[ ,]\d{3})+(?:\.\d+)?$/.test(content)
      ? content.replace(/[ ,]/g, "")
      : content.replace(",", ".");
  }
  return { start: last.index, end: last.index + last[0].length, content };
}
