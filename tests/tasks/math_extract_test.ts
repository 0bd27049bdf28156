import assert from "node:assert/strict";
import { DEFAULT_GRADE_OPTIONS, extractAnswer } from "../../engine/tasks/math/mod.ts";

const extract = (text: string, plainOnly = false) =>
  extractAnswer(text, { ...DEFAULT_GRADE_OPTIONS, plainOnly });

Deno.test("extract: the last \\boxed{} wins, with nested braces", () => {
  assert.deepEqual(
    extract("first $\\boxed{1}$ was wrong. Correcting it: $\\boxed{\\frac{1}{2}}$."),
    {
      answer: "\\frac{1}{2}",
      source: "boxed",
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
  });
  assert.deepEqual(extract("We set $d = 90/n$, so there are 12 sequences."), {
    answer: "12",
    source: "number",
  });
  assert.equal(extract("Answer \\[ 9 \\]")?.answer, "9");
  assert.equal(extract("Answer \\( 9 \\)")?.answer, "9");
  assert.equal(extract("Answer $$ 9 $$")?.answer, "9");
  assert.equal(extract("cost: \\$5 is $3$")?.answer, "3");
});

Deno.test("extract: math segments joined by 'or' are one answer", () => {
  assert.equal(extract("$21,16$ or $11$")?.answer, "21,16, 11");
});

Deno.test("extract: a bare expression is taken whole", () => {
  assert.deepEqual(extract("-10/9"), { answer: "-10/9", source: "whole-text" });
  assert.deepEqual(extract("28 percent"), { answer: "28 percent", source: "whole-text" });
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
