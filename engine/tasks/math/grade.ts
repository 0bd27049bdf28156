/**
 * Grades a predicted answer against a gold answer: extract both, compare spellings, parse,
 * compare meanings. The result says what was extracted from each side and why it matched or not.
 *
 * @example
 * ```ts
 * const r = gradeAnswer("$\\frac{1}{3}$", "The answer is $\\boxed{1/3}$.");
 * r.equivalent; // true
 * r.pred.extracted; // "1/3"
 * ```
 */
import { type MathNode, node, num, show } from "./ast.ts";
import { compareAnswers } from "./equivalence.ts";
import { type AnswerSource, extractAnswer } from "./extract.ts";
import { stringKey } from "./latex-normalize.ts";
import { DEFAULT_GRADE_OPTIONS, type GradeOptions } from "./options.ts";
import { parseMathNode } from "./parse-math-node.ts";

/** What was found on one side. */
export interface ExtractedSide {
  /** The extracted answer text, null when none was found. */
  readonly extracted: string | null;
  readonly source: AnswerSource | null;
  /** The parsed form (plain infix), null when it did not parse. */
  readonly parsed: string | null;
  /** Why parsing failed, when it did. */
  readonly parseError?: string;
}

/** The verdict for one gold/prediction pair. */
export interface GradeResult {
  readonly equivalent: boolean;
  readonly gold: ExtractedSide;
  readonly pred: ExtractedSide;
  readonly reason: string;
}

function side(text: string, options: GradeOptions): { side: ExtractedSide; tree: MathNode | null } {
  const found = extractAnswer(text, options);
  if (!found) return { side: { extracted: null, source: null, parsed: null }, tree: null };
  try {
    const parsed = parseMathNode(found.answer);
    // `28 percent` and `$28$ %`: the percent stood outside the answer text (Math-Verify's
    // `convert_to_pct`), so the text stays `28` and the value is 28/100.
    const tree = found.percent ? node({ kind: "div", num: parsed, den: num(100) }) : parsed;
    return { side: { extracted: found.answer, source: found.source, parsed: show(tree) }, tree };
  } catch (err) {
    const parseError = err instanceof Error ? err.message : String(err);
    return {
      side: { extracted: found.answer, source: found.source, parsed: null, parseError },
      tree: null,
    };
  }
}

/** Grades `pred` against `gold` under `options` (Math-Verify-style defaults). */
export function gradeAnswer(
  gold: string,
  pred: string,
  options: GradeOptions = DEFAULT_GRADE_OPTIONS,
): GradeResult {
  const g = side(gold, options);
  const p = side(pred, options);
  const result = (equivalent: boolean, reason: string): GradeResult =>
    Object.freeze({ equivalent, gold: g.side, pred: p.side, reason });
  if (g.side.extracted === null) return result(false, "no answer found in the gold text");
  if (p.side.extracted === null) return result(false, "no answer found in the prediction");
  if (stringKey(g.side.extracted) === stringKey(p.side.extracted)) {
    return result(true, "same answer text");
  }
  if (!g.tree) return result(false, `gold answer did not parse: ${g.side.parseError}`);
  if (!p.tree) return result(false, `predicted answer did not parse: ${p.side.parseError}`);
  const c = compareAnswers(g.tree, p.tree, options);
  return result(c.equal, c.reason);
}
