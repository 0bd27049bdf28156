/**
 * Synthetic multi-step arithmetic tasks with exact answers, deterministic from the seed.
 *
 * Every candidate problem is a pure function of `(seed, candidate index)` through a keyed
 * counter-based stream (engine/random, docs/ARCHITECTURE.md "Determinism"). Its split is a pure
 * function of the problem text (a SHA-256 bucket), so one problem text belongs to exactly one
 * split under every seed and difficulty: train, validation and test can never overlap. A split's
 * k-th task is the k-th candidate that falls in that split.
 *
 * @example
 * ```ts
 * const [task] = generateArithmeticTasks({ seed: 1, difficulty: 3, split: "test", count: 1 });
 * task.problem; // "Compute $(12 + 7) \\times 3 - 40 \\div 8$. ..."
 * task.answer;  // "52"
 * ```
 */
import { createHash } from "node:crypto";
import { randomStream, uniformInt } from "../../random/mod.ts";
import {
  binary,
  type Expression,
  leaf,
  type Operator,
  toLatexExpression,
  valueOf,
} from "./expression.ts";
import { isZero, toLatex } from "./rational.ts";

/** The three disjoint splits. */
export type Split = "train" | "validation" | "test";
export const SPLITS: readonly Split[] = Object.freeze(["train", "validation", "test"]);

/** One generated task. */
export interface ArithmeticTask {
  readonly kind: "math-task";
  /** Stable id: seed, difficulty and candidate index. */
  readonly id: string;
  readonly split: Split;
  readonly difficulty: number;
  /** Problem statement with the expression in `$...$`. */
  readonly problem: string;
  /** Exact answer in LaTeX: an integer or a reduced `\frac{p}{q}` (with a leading `-`). */
  readonly answer: string;
  /** Number of operators (steps) in the expression. */
  readonly steps: number;
}

/** What to generate. */
export interface ArithmeticTaskOptions {
  readonly seed: number;
  /** 1 (two additions/subtractions of small numbers) to 10 (eleven operators, operands to 10^4). */
  readonly difficulty: number;
  readonly split: Split;
  readonly count: number;
  /** Share of problem texts in validation and test (default 0.1 each; train gets the rest). */
  readonly validationShare?: number;
  readonly testShare?: number;
}

/** A bad generator option, naming the option, the value and what is allowed. */
export class TaskOptionError extends Error {
  override name = "TaskOptionError";
  constructor(readonly option: string, readonly value: unknown, readonly allowed: string) {
    super(`arithmetic tasks: ${option}=${JSON.stringify(value)} is invalid; expected ${allowed}`);
  }
}

/** Salt of the split hash: changing it would move problems between splits, so it is fixed. */
const SPLIT_SALT = "polyrl/arithmetic-split/v1";
const PURPOSE = "task:arithmetic";
/** Stop after this many candidates per requested task (a split share near 0 would loop). */
const MAX_CANDIDATES_PER_TASK = 10_000;

interface Level {
  readonly operators: number;
  readonly maxOperand: number;
  readonly ops: readonly Operator[];
  readonly negatives: boolean;
}

/** Difficulty -> shape: more operators, bigger operands, then division and negative operands. */
export function difficultyLevel(difficulty: number): Level {
  if (!Number.isInteger(difficulty) || difficulty < 1 || difficulty > 10) {
    throw new TaskOptionError("difficulty", difficulty, "an integer from 1 to 10");
  }
  return Object.freeze({
    operators: difficulty + 1,
    maxOperand: difficulty <= 2 ? 20 : difficulty <= 4 ? 100 : difficulty <= 7 ? 1000 : 10_000,
    ops: (difficulty === 1
      ? ["+", "-"]
      : difficulty === 2
      ? ["+", "-", "*"]
      : ["+", "-", "*", "/"]) as readonly Operator[],
    negatives: difficulty >= 5,
  });
}

/** Draw `i` of a candidate, an integer in [min, max]. Injected so tests can pin draws. */
export type Draw = (index: number, min: number, max: number) => number;

/** The keyed draw function of one candidate: a pure function of (seed, candidate, index). */
export function candidateDraw(seed: number, difficulty: number, candidate: number): Draw {
  const stream = randomStream({ seed, purpose: `${PURPOSE}:d${difficulty}`, prompt: candidate });
  return (index, min, max) => uniformInt(stream, index, min, max);
}

/** Builds the expression of one candidate from its draws. */
export function buildExpression(level: Level, draw: Draw): Expression {
  let index = 0;
  const next = (min: number, max: number) => draw(index++, min, max);
  const operand = (): Expression => {
    const magnitude = next(1, level.maxOperand);
    const negative = level.negatives && next(0, 3) === 0;
    return leaf(BigInt(negative ? -magnitude : magnitude));
  };
  const build = (operators: number): Expression => {
    if (operators === 0) return operand();
    const leftOps = next(0, operators - 1);
    const op = level.ops[next(0, level.ops.length - 1)];
    const left = build(leftOps);
    const right = build(operators - 1 - leftOps);
    // Dividing by a zero subexpression has no answer: that step becomes a subtraction instead.
    return binary(op === "/" && isZero(valueOf(right)) ? "-" : op, left, right);
  };
  return build(level.operators);
}

/** The split a problem text belongs to (independent of seed). */
export function splitOf(problem: string, validationShare = 0.1, testShare = 0.1): Split {
  const digest = createHash("sha256").update(`${SPLIT_SALT}\n${problem}`, "utf8").digest();
  const u = digest.readUInt32BE(0) / 2 ** 32;
  return u < testShare ? "test" : u < testShare + validationShare ? "validation" : "train";
}

/**
 * The expression tree of a generated task, rebuilt from its id (seed, difficulty, candidate).
 *
 * @example
 * ```ts
 * import { workingSteps } from "./expression.ts";
 * import { generateArithmeticTasks, taskExpression } from "./generator.ts";
 *
 * const [task] = generateArithmeticTasks({ seed: 1, difficulty: 1, split: "train", count: 1 });
 * workingSteps(taskExpression(task)); // ["13 - (-16)", "29"]: the problem is $13 - (1 - 17)$
 * ```
 */
export function taskExpression(task: ArithmeticTask): Expression {
  const match = /^arithmetic\/s(\d+)\/d(\d+)\/c(\d+)$/.exec(task.id);
  if (match === null) throw new TaskOptionError("task.id", task.id, "an arithmetic task id");
  const [seed, difficulty, candidate] = match.slice(1).map(Number);
  const expression = buildExpression(
    difficultyLevel(difficulty),
    candidateDraw(seed, difficulty, candidate),
  );
  if (problemText(expression) !== task.problem) {
    throw new TaskOptionError("task.id", task.id, "the id of this task's own problem");
  }
  return expression;
}

function problemText(e: Expression): string {
  return `Compute $${toLatexExpression(e)}$. Give the exact answer as an integer or a fraction ` +
    `in lowest terms, and put it in \\boxed{}.`;
}

function checkShare(option: string, value: number): void {
  if (!(value >= 0 && value < 1)) throw new TaskOptionError(option, value, "a number in [0, 1)");
}

/**
 * The first `count` tasks of a split.
 *
 * @example
 * ```ts
 * generateArithmeticTasks({ seed: 7, difficulty: 1, split: "train", count: 100 });
 * ```
 */
export function generateArithmeticTasks(options: ArithmeticTaskOptions): ArithmeticTask[] {
  const { seed, difficulty, split, count } = options;
  const validationShare = options.validationShare ?? 0.1;
  const testShare = options.testShare ?? 0.1;
  checkShare("validationShare", validationShare);
  checkShare("testShare", testShare);
  if (validationShare + testShare >= 1) {
    throw new TaskOptionError(
      "validationShare+testShare",
      validationShare + testShare,
      "a sum below 1",
    );
  }
  if (!SPLITS.includes(split)) throw new TaskOptionError("split", split, SPLITS.join(", "));
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new TaskOptionError("count", count, "a non-negative integer");
  }
  const level = difficultyLevel(difficulty);
  const tasks: ArithmeticTask[] = [];
  const limit = Math.max(1, count) * MAX_CANDIDATES_PER_TASK;
  for (let candidate = 0; tasks.length < count; candidate++) {
    if (candidate >= limit) {
      throw new TaskOptionError(
        `${split}Share`,
        split === "test" ? testShare : validationShare,
        `a share large enough to find ${count} ${split} tasks`,
      );
    }
    const expression = buildExpression(level, candidateDraw(seed, difficulty, candidate));
    const problem = problemText(expression);
    if (splitOf(problem, validationShare, testShare) !== split) continue;
    tasks.push(Object.freeze({
      kind: "math-task",
      id: `arithmetic/s${seed}/d${difficulty}/c${candidate}`,
      split,
      difficulty,
      problem,
      answer: toLatex(valueOf(expression)),
      steps: level.operators,
    }));
  }
  return tasks;
}
