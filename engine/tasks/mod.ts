/**
 * Tasks and answer grading: synthetic arithmetic, benchmark files, Math-Verify-style grading.
 *
 * @example
 * ```ts
 * import { generateArithmeticTasks, gradeAnswer } from "./mod.ts";
 * const [t] = generateArithmeticTasks({ seed: 1, difficulty: 2, split: "train", count: 1 });
 * gradeAnswer(t.answer, "... so the result is $\\boxed{" + t.answer + "}$").equivalent; // true
 * ```
 */
export * from "./arithmetic/mod.ts";
export * from "./benchmark/mod.ts";
export * from "./math/mod.ts";
export * from "./search/mod.ts";
