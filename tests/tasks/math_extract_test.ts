import assert from "node:assert/strict";
import {
  DEFAULT_GRADE_OPTIONS,
  extractAnswer,
  gradeOptions,
  GradeOptionsError,
} from "../../engine/tasks/math/mod.ts";

const extract = (text: string, plainOnly = false) =>
  extractAnswer(text, { ...DEFAULT_GRADE_OPTIONS, plainOnly });

Deno.test("extract: the last \\boxed{} wins, with nested braces", () => {
  assert.deepEqual(
    extract("first $\\boxed{1}$ was wrong. Correcting it: $\\boxed{\\frac{1}{2}}$."),
    {
      answer: "\\frac{1}{2}",
      source: "boxed",
      percent: false,
    },
  );
});

Deno.test("extract: boxes separated only by connector words form one list", () => {
  assert.equal(extract("\\boxed{1} and \\boxed{2} and \\boxed{3}")?.answer, "1, 2, 3");
  // Five words of prose between them: only the last box is the answer.
  assert.equal(extract("\\boxed{1} no no no no no \\boxed{2}")?.answer, "2");
});

Deno.test("extract: an unclosed box runs to the end of the text", () => {
  assert.equal(extract("so \\boxed{x = 3")?.answer, "x = 3");
});

Deno.test("extract: 'final answer is' sentence, math or plain, superseding an earlier box", () => {
  assert.deepEqual(
    extract("We get $\\boxed{255}$ first. Final Answer: The final answer is $10,455$. I hope"),
    {
      answer: "10,455",
      source: "final-answer",
      percent: false,
    },
  );
  assert.equal(extract("Final Answer: The final answer is 7.78.")?.answer, "7.78");
  assert.equal(
    extract("Final Answer: The volume of $ABCD$ is 120. I hope it is correct.")?.answer,
    "120",
  );
});

Deno.test("extract: the last math segment or the last plain number, whichever is later", () => {
  assert.deepEqual(extract("The identity is $x = 2$ and so on."), {
    answer: "x = 2",
    source: "latex",
    percent: false,
  });
  assert.deepEqual(extract("We set $d = 90/n$, so there are 12 sequences."), {
    answer: "12",
    source: "number",
    percent: false,
  });
  assert.equal(extract("Answer \\[ 9 \\]")?.answer, "9");
  assert.equal(extract("Answer \\( 9 \\)")?.answer, "9");
  assert.equal(extract("Answer $$ 9 $$")?.answer, "9");
  assert.equal(extract("cost: \\$5 is $3$")?.answer, "3");
});

Deno.test("extract: math segments joined by 'or' are one answer", () => {
  assert.equal(extract("$21,16$ or $11$")?.answer, "21,16, 11");
});

Deno.test("extract: a bare expression is taken whole, a lone plain number as a number", () => {
  assert.deepEqual(extract("x^2 + 1"), { answer: "x^2 + 1", source: "whole-text", percent: false });
  assert.deepEqual(extract("-10/9"), { answer: "-10/9", source: "number", percent: false });
  assert.deepEqual(extract("28 percent"), { answer: "28", source: "number", percent: true });
  // A decimal comma or a leading dot in plain text, as Math-Verify's expression extractor reads.
  assert.equal(extract("0,5")?.answer, "0.5");
  assert.equal(extract("The answer is .75")?.answer, "0.75");
});

Deno.test("extract: plain-only numbers with thousands spaces and decimal commas", () => {
  assert.equal(extract("1 000", true)?.answer, "1000");
  assert.equal(extract("Soucis : 2,74 $ a..", true)?.answer, "2.74");
  assert.equal(extract("the number is not 10 which is 1,000.99€", true)?.answer, "1000.99");
  assert.equal(extract("1000,99", true)?.answer, "1000.99");
  assert.equal(extract("no digits here", true), null);
});

Deno.test("extract: doubled backslashes from double-escaped JSON are undone", () => {
  assert.equal(extract("\\\\boxed{\\\\frac{1}{2}}")?.answer, "\\frac{1}{2}");
});

Deno.test("extract: latex_only reads math and boxes, never a plain-text number", () => {
  const latexOnly = (text: string) =>
    extractAnswer(text, { ...DEFAULT_GRADE_OPTIONS, latexOnly: true });
  assert.equal(latexOnly("so it is 0,5"), null);
  assert.equal(latexOnly("Final Answer: The final answer is 7.78."), null);
  assert.equal(latexOnly("so $x = .5$")?.answer, "x = .5");
  assert.equal(latexOnly("we get \\boxed{12} apples")?.answer, "12");
});

Deno.test("extract: a percent after the answer, outside it, is kept as a flag", () => {
  assert.deepEqual(extract("so $28$ % of them"), { answer: "28", source: "latex", percent: true });
  assert.equal(extract("or $\\boxed{20}$ percent.")?.percent, true);
  // A bare box is not followed by its math segment's end: Math-Verify drops the sign.
  assert.equal(extract("so \\boxed{20}%")?.percent, false);
});

Deno.test("extract: inline math broken across lines is neither math nor plain text", () => {
  assert.equal(extract("Answer \\( \n 9 \n \\)"), null);
  assert.equal(extract("Answer $ \n 9 \n $"), null);
  assert.equal(extract("Answer \\[ \n 9 \n \\]")?.answer, "9");
  assert.equal(extract("costs $7 and \n more")?.answer, "7");
  assert.equal(extract("Answer \\( \n 9 \n \\)", true)?.answer, "9");
});

Deno.test("options: plain_only and latex_only exclude each other", () => {
  assert.equal(gradeOptions({ latex_only: true }).latexOnly, true);
  assert.throws(
    () => gradeOptions({ plain_only: true, latex_only: true }),
    (e: unknown) => e instanceof GradeOptionsError && e.key === "latex_only",
  );
});

Deno.test("extract: a bare \\frac{a}{b} in prose is math, a bare expression stays whole", () => {
  assert.equal(extract("so the ratio is \\frac{1}{2} overall")?.answer, "\\frac{1}{2}");
  assert.equal(extract("\\frac{1}{2}\\pi")?.answer, "\\frac{1}{2}\\pi");
});

Deno.test("extract: a line-ending '$' pairs only with a '$' that starts a later line", () => {
  assert.equal(extract("Answer $\n 9 and then $x = 3$")?.answer, "x = 3");
});
