/**
 * Exact match of a search answer, as Search-R1 grades its QA answers and veRL ports it
 * (verl/utils/reward_score/qa_em.py, `normalize_answer` and `em_check`): both sides lower-cased,
 * punctuation and the articles a/an/the removed, whitespace collapsed, then compared.
 */

const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;

/**
 * The normalized form of an answer.
 *
 * @example
 * ```ts
 * import { normalizeAnswer } from "./exact-match.ts";
 *
 * normalizeAnswer("  The Kalo-Ren. "); // "kaloren"
 * ```
 */
export function normalizeAnswer(text: string): string {
  return text.toLowerCase().replace(PUNCTUATION, "").replace(/\b(a|an|the)\b/g, " ").split(/\s+/)
    .filter((w) => w !== "").join(" ");
}

/**
 * Whether a predicted answer matches the gold one after normalization.
 *
 * @example
 * ```ts
 * import { exactMatch } from "./exact-match.ts";
 *
 * exactMatch("Kalo", "kalo."); // true
 * ```
 */
export function exactMatch(gold: string, predicted: string): boolean {
  return normalizeAnswer(gold) === normalizeAnswer(predicted);
}
