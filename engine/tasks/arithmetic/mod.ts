/**
 * Synthetic arithmetic tasks: exact answers, adjustable difficulty, disjoint splits.
 *
 * @example
 * ```ts
 * import { generateArithmeticTasks } from "./mod.ts";
 * generateArithmeticTasks({ seed: 1, difficulty: 2, split: "validation", count: 8 });
 * ```
 */
export {
  type ArithmeticTask,
  type ArithmeticTaskOptions,
  buildExpression,
  candidateDraw,
  difficultyLevel,
  type Draw,
  generateArithmeticTasks,
  type Split,
  splitOf,
  SPLITS,
  taskExpression,
  TaskOptionError,
} from "./generator.ts";
export {
  binary,
  type Expression,
  leaf,
  readingOf,
  reduceOnce,
  toLatexExpression,
  valueOf,
  workingSteps,
} from "./expression.ts";
export { type Rational, rational, toLatex } from "./rational.ts";
