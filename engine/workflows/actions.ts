/**
 * Parsers for the action formats agents must follow. A turn that does not follow its format is
 * an invalid action (Dr. MAS subtracts a penalty from its reward) and the workflow takes the
 * conservative branch.
 */
import { extractAnswer } from "../tasks/mod.ts";

/** The last `verdict: accept|revise` in a verifier's text, or null when there is none. */
export function parseVerdict(text: string): boolean | null {
  const matches = [...text.matchAll(/verdict\s*:\s*(accept|revise)\b/gi)];
  if (matches.length === 0) return null;
  return matches[matches.length - 1][1].toLowerCase() === "accept";
}

/** The last `action: search|answer` in a router's text, or null. */
export function parseRoute(text: string): "search" | "answer" | null {
  const matches = [...text.matchAll(/action\s*:\s*(search|answer)\b/gi)];
  if (matches.length === 0) return null;
  return matches[matches.length - 1][1].toLowerCase() as "search" | "answer";
}

/** The text after the last `query:`, up to the end of its line, or null. */
export function parseQuery(text: string): string | null {
  const matches = [...text.matchAll(/query\s*:\s*([^\n]*)/gi)];
  const query = matches.length > 0 ? matches[matches.length - 1][1].trim() : "";
  return query.length > 0 ? query : null;
}

/**
 * The text of the answer a solver, answerer, generator or critic gave (boxed or "final answer
 * is"), or null; grading parses it further (tasks' `parseMathNode`).
 *
 * @example
 * ```ts
 * import { parseAnswerText } from "./actions.ts";
 * parseAnswerText("so the final answer is \\boxed{42}"); // "42"
 * ```
 */
export function parseAnswerText(text: string): string | null {
  return extractAnswer(text, { plainOnly: false })?.answer ?? null;
}
