import assert from "node:assert/strict";
import {
  binary,
  buildExpression,
  difficultyLevel,
  type Draw,
  generateArithmeticTasks,
  leaf,
  rational,
  readingOf,
  reduceOnce,
  splitOf,
  SPLITS,
  taskExpression,
  TaskOptionError,
  toLatex,
  toLatexExpression,
  valueOf,
  workingSteps,
} from "../../engine/tasks/arithmetic/mod.ts";
import { gradeAnswer } from "../../engine/tasks/math/mod.ts";

/** A draw function replaying a fixed script, checking each draw's range. */
function scripted(values: number[]): Draw {
  return (index, min, max) => {
    const v = values[index];
    assert.ok(v !== undefined, `draw ${index} is past the script`);
    assert.ok(v >= min && v <= max, `draw ${index} = ${v} outside [${min}, ${max}]`);
    return v;
  };
}

Deno.test("arithmetic: a scripted draw builds the hand-computed expression", () => {
  // leftOps=1, op=*, [leftOps=0, op=+, 3, 4], [leftOps=0, op=-, 10, 2]
  const e = buildExpression(difficultyLevel(2), scripted([1, 2, 0, 0, 3, 4, 0, 1, 10, 2]));
  assert.equal(toLatexExpression(e), "(3 + 4) \\times (10 - 2)");
  assert.deepEqual(valueOf(e), rational(56n));
});

Deno.test("arithmetic: division by a zero subexpression becomes a subtraction", () => {
  // d3 (4 operators, + - * /): 7 / (3 - 1 * (1 + 2)), whose divisor is 0.
  const script = [0, 3, 7, 0, 1, 3, 0, 2, 1, 0, 0, 1, 2];
  const e = buildExpression(difficultyLevel(3), scripted(script));
  assert.equal(toLatexExpression(e), "7 - (3 - 1 \\times (1 + 2))");
  assert.equal(toLatex(valueOf(e)), "7");
});

Deno.test("arithmetic: exact answers in LaTeX-friendly form", () => {
  assert.equal(toLatex(rational(14n, 6n)), "\\frac{7}{3}");
  assert.equal(toLatex(rational(7n, -3n)), "-\\frac{7}{3}");
  assert.equal(toLatex(rational(-12n, 4n)), "-3");
  assert.throws(() => rational(1n, 0n), RangeError);
});

Deno.test("arithmetic: deterministic from the seed, different across seeds", () => {
  const a = generateArithmeticTasks({ seed: 11, difficulty: 4, split: "train", count: 20 });
  const b = generateArithmeticTasks({ seed: 11, difficulty: 4, split: "train", count: 20 });
  const c = generateArithmeticTasks({ seed: 12, difficulty: 4, split: "train", count: 20 });
  assert.deepEqual(a, b);
  assert.notDeepEqual(a.map((t) => t.problem), c.map((t) => t.problem));
  assert.equal(new Set(a.map((t) => t.id)).size, 20);
});

Deno.test("arithmetic: train, validation and test never share a problem, across seeds too", () => {
  // Difficulty 1 has a small problem space, so problems repeat within a split and would
  // collide across splits if splits were drawn independently.
  const seen = new Map<string, string>();
  for (const seed of [1, 2]) {
    for (const split of SPLITS) {
      const count = split === "train" ? 400 : 60;
      for (const t of generateArithmeticTasks({ seed, difficulty: 1, split, count })) {
        assert.equal(t.split, split);
        assert.equal(splitOf(t.problem), split);
        const other = seen.get(t.problem);
        assert.ok(
          other === undefined || other === split,
          `${t.problem} is in ${other} and ${split}`,
        );
        seen.set(t.problem, split);
      }
    }
  }
  const repeats = generateArithmeticTasks({ seed: 1, difficulty: 1, split: "train", count: 400 });
  assert.ok(
    new Set(repeats.map((t) => t.problem)).size < 400,
    "the space is small enough to repeat",
  );
});

Deno.test("arithmetic: difficulty grows steps and operand size; answers check out", () => {
  for (const difficulty of [1, 3, 6]) {
    const level = difficultyLevel(difficulty);
    for (const t of generateArithmeticTasks({ seed: 3, difficulty, split: "test", count: 10 })) {
      assert.equal(t.steps, difficulty + 1);
      const expression = /\$(.+)\$/.exec(t.problem)![1];
      const operands = expression.match(/\d+/g)!.map(Number);
      assert.equal(operands.length, difficulty + 2);
      assert.ok(operands.every((n) => n >= 1 && n <= level.maxOperand));
      // An independent check: the grader's floating evaluation of the expression.
      const r = gradeAnswer(`$${t.answer}$`, `$${expression}$`);
      assert.ok(r.equivalent, `${expression} = ${t.answer}? ${r.reason}`);
    }
  }
});

Deno.test("arithmetic: bad options name the option and what is allowed", () => {
  assert.throws(
    () => generateArithmeticTasks({ seed: 1, difficulty: 0, split: "train", count: 1 }),
    (e: unknown) =>
      e instanceof TaskOptionError && e.option === "difficulty" && /1 to 10/.test(e.message),
  );
  assert.throws(
    () => generateArithmeticTasks({ seed: 1, difficulty: 1, split: "dev" as "test", count: 1 }),
    /split="dev" is invalid; expected train, validation, test/,
  );
  assert.throws(
    () =>
      generateArithmeticTasks({ seed: 1, difficulty: 1, split: "test", count: 1, testShare: 1 }),
    /testShare=1/,
  );
});

Deno.test("arithmetic: working reduces one operation at a time, leftmost innermost first", () => {
  const e = binary("*", binary("-", leaf(2n), leaf(12n)), binary("+", leaf(3n), leaf(4n)));
  assert.deepEqual(workingSteps(e), ["-10 \\times (3 + 4)", "-10 \\times 7", "-70"]);
  assert.equal(reduceOnce(leaf(5n)), null);
  // 1 / 3 is not an integer: working stops there, before any fraction.
  assert.deepEqual(workingSteps(binary("+", binary("/", leaf(1n), leaf(3n)), leaf(2n))), []);
  for (
    const task of generateArithmeticTasks({ seed: 9, difficulty: 2, split: "test", count: 30 })
  ) {
    const steps = workingSteps(taskExpression(task));
    assert.equal(steps.length, task.steps);
    assert.equal(steps.at(-1), task.answer);
  }
});

Deno.test("arithmetic: a task's expression comes back from its id, and only its own", () => {
  const [task, other] = generateArithmeticTasks({
    seed: 4,
    difficulty: 3,
    split: "train",
    count: 2,
  });
  assert.equal(toLatexExpression(taskExpression(task)), /\$([^$]+)\$/.exec(task.problem)![1]);
  assert.throws(() => taskExpression({ ...task, id: other.id }), /own problem/);
  assert.throws(() => taskExpression({ ...task, id: "benchmark/7" }), /arithmetic task id/);
});

Deno.test("arithmetic: working follows the text's reading, not the generator's nesting", () => {
  // 11 + (5 + 5) prints as 11 + 5 + 5, which a reader evaluates left to right.
  const rightNested = binary("+", leaf(11n), binary("+", leaf(5n), leaf(5n)));
  assert.equal(toLatexExpression(rightNested), "11 + 5 + 5");
  assert.deepEqual(workingSteps(rightNested), ["16 + 5", "21"]);
  assert.deepEqual(
    workingSteps(binary("*", leaf(2n), binary("/", leaf(6n), binary("*", leaf(3n), leaf(1n))))),
    ["12 \\div (3 \\times 1)", "12 \\div 3", "4"],
  );
  // Parentheses the text shows and higher precedence on the right are kept.
  assert.deepEqual(workingSteps(binary("-", leaf(1n), binary("+", leaf(2n), leaf(3n)))), [
    "1 - 5",
    "-4",
  ]);
  assert.deepEqual(workingSteps(binary("+", leaf(1n), binary("*", leaf(2n), leaf(3n)))), [
    "1 + 6",
    "7",
  ]);
  for (const difficulty of [1, 2, 3, 6]) {
    const tasks = generateArithmeticTasks({ seed: 2, difficulty, split: "train", count: 200 });
    for (const task of tasks) {
      const e = taskExpression(task);
      const reading = readingOf(e);
      assert.equal(toLatexExpression(reading), toLatexExpression(e), task.problem);
      assert.deepEqual(valueOf(reading), valueOf(e), task.problem);
    }
  }
});
