/**
 * Math answer grading in the spirit of Math-Verify: extraction (`\boxed{}`, "final answer",
 * LaTeX segments, plain numbers), parsing, and equivalence (numbers, expressions, sets,
 * intervals, relations), plus time-limited batch grading.
 *
 * @example
 * ```ts
 * import { gradeAnswer } from "./mod.ts";
 * gradeAnswer("$28\\%$", "28 percent").equivalent; // true
 * ```
 */
export { type MathNode, show } from "./ast.ts";
export { compareAnswers, type Comparison } from "./equivalence.ts";
export {
  type AnswerSource,
  extractAnswer,
  type Extraction,
  type ExtractOptions,
} from "./extract.ts";
export { type ExtractedSide, gradeAnswer, type GradeResult } from "./grade.ts";
export {
  type BatchError,
  type BatchRecord,
  type BatchResult,
  type BatchSummary,
  gradeJsonl,
  parseBatchLine,
  summarize,
} from "./grade-batch.ts";
export { GradeRunner, TIMEOUT_REASON } from "./grade-runner.ts";
export {
  DEFAULT_GRADE_OPTIONS,
  type GradeOptions,
  gradeOptions,
  GradeOptionsError,
} from "./options.ts";
export { parseMathNode } from "./parse-math-node.ts";
export { AnswerSyntaxError } from "./tokenize.ts";
