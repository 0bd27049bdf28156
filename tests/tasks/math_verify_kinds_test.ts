/**
 * Nine kinds of answers graded as Math-Verify grades them. Each case is [gold, prediction,
 * verdict], the verdict being Math-Verify 0.8.0's (with latex2sympy2_extended 1.10.2) under its
 * defaults: `parse` with LaTeX and expression extraction, `verify` with float_rounding 6 and
 * strict. The verdicts were worked out from its parser.py / grader.py and its tests, and checked
 * by running its code on each pair. Rows under `latex_only` / `plain_only` are its verdicts with
 * `extraction_config=[LatexExtractionConfig()]` / `[ExprExtractionConfig()]`.
 *
 * One deliberate default: a prediction whose only math is an inline `$..$` / `\(..\)` pair broken
 * across lines has no answer, as in Math-Verify's test_latex_notation (LaTeX extraction), although
 * its expression extractor would read a number in there.
 */
import assert from "node:assert/strict";
import {
  DEFAULT_GRADE_OPTIONS,
  gradeAnswer,
  type GradeOptions,
} from "../../engine/tasks/math/mod.ts";

type Case = readonly [gold: string, pred: string, verdict: boolean];

function check(cases: readonly Case[], options: Partial<GradeOptions> = {}): void {
  const wrong = cases.flatMap(([gold, pred, verdict]) => {
    const r = gradeAnswer(gold, pred, { ...DEFAULT_GRADE_OPTIONS, ...options });
    return r.equivalent === verdict ? [] : [
      `${JSON.stringify(gold)} vs ${JSON.stringify(pred)}: expected ${verdict}, got ` +
      `${r.equivalent} (${r.gold.parsed ?? r.gold.extracted} | ${
        r.pred.parsed ?? r.pred.extracted
      }: ${r.reason})`,
    ];
  });
  assert.deepEqual(wrong, [], `${wrong.length} of ${cases.length} disagree:\n${wrong.join("\n")}`);
}

const r = String.raw;

Deno.test("kind 1: an equation naming the answer counts by its right side", () => {
  check([
    [r`$x = 3$`, r`$3$`, true],
    [r`$3$`, r`$x = 3$`, true],
    [r`$|AB| = 1$`, r`$1$`, true],
    [r`$|AB|=1$`, r`$2$`, false],
    [r`$\angle A = 60^\circ$`, r`$60$`, true],
    [r`$m\angle ABC = 45^\circ$`, r`$45$`, true],
    [r`$|x| = 2$`, r`$2$`, true],
    [r`$x + y = 3$`, r`$3$`, true],
    [r`$\frac{AB}{CD} = \frac{2}{3}$`, r`$\frac23$`, true],
    [r`$f(x) = x^2$`, r`$x^2$`, true],
    [r`$BC = 2\sqrt{3}$`, r`$\boxed{2\sqrt3}$`, true],
    [r`The final answer is $\boxed{x = 3}$`, r`$3$`, true],
    [r`$5$`, r`$f(2) = 5$`, true],
    [r`$3$`, r`$x=y=3$`, true],
    [r`$x = 3$`, r`$X = 3$`, true], // symbols are lowercase to latex2sympy2
    // Not assignments: a number, a power, a root or a sign on the left.
    [r`$2x = 6$`, r`$6$`, false],
    [r`$2x = 6$`, r`$3$`, false],
    [r`$f(2) = 5$`, r`$5$`, false],
    [r`$x^2 = 4$`, r`$4$`, false],
    [r`$\sqrt{x} = 2$`, r`$2$`, false],
    [r`$-x = 2$`, r`$2$`, false],
    [r`$\frac{1}{x} = 2$`, r`$2$`, false],
    // Two assignments must name the same thing; other relations are no assignments.
    [r`$x = 3$`, r`$y = 3$`, false],
    [r`$a = 2$`, r`$b=2$`, false],
    [r`$x = 3$`, r`$x = 4$`, false],
    [r`$x = 2+1$`, r`$x=3$`, true],
    [r`$x \le 3$`, r`$3$`, false],
    [r`$k = 4$`, r`$k \ge 4$`, false],
  ]);
});

Deno.test("kind 2: named parts of an answer against a bare tuple", () => {
  check([
    [r`$a = 1, b = 2$`, r`$(1, 2)$`, true],
    // A gold list is compared in any order (Math-Verify sorts both sides by value).
    [r`$a = 1, b = 2$`, r`$(2, 1)$`, true],
    [r`$a=1, b=2$`, r`$(1, 3)$`, false],
    [r`$x = 5, y = 8$`, r`$(5, 8)$`, true],
    [r`$p=5, q=2$`, r`$\boxed{(5,2)}$`, true],
    [r`$a=1,b=2,c=3$`, r`$(1,2,3)$`, true],
    [r`$a=1,b=2,c=3$`, r`$(1,2,4)$`, false],
    [r`$a=1, b=2$`, r`$(1,2,3)$`, false],
    [r`$a = 1, b = 2$`, r`$[1, 2]$`, false],
    [r`$x=-5, p=\frac{14}{3}$`, r`$(-5, \frac{14}{3})$`, true],
    // A gold tuple against a predicted list: in the written order.
    [r`$(1, 2)$`, r`$a = 1, b = 2$`, true],
    [r`$(1, 2)$`, r`$a = 2, b = 1$`, false],
    [r`$(p,q) = (3,2)$`, r`$(3,2)$`, true],
    [r`$(m,n)=(1,2)$`, r`$m=1, n=2$`, true],
    [r`$m=1,n=2$`, r`The pair is $(m, n) = (1, 2)$.`, true],
    [r`$a = 1, b = 2$`, r`$b = 2, a = 1$`, true],
    [r`$a = 1, b = 2$`, r`$a = 2, b = 1$`, false],
    [r`$x = 2, y = 3$`, r`$\boxed{x = 2}, \boxed{y = 3}$`, true],
  ]);
});

Deno.test("kind 3: solutions separated by ';' against a list of tuples", () => {
  check([
    [r`$p=5,q=2;p=7,q=2$`, r`$(5,2),(7,2)$`, true],
    [r`$x=1,y=2;x=3,y=4$`, r`$(1,2),(3,4)$`, true],
    [r`$x=1,y=2;x=3,y=4$`, r`$(3,4),(1,2)$`, true],
    [r`$x=1,y=2;x=3,y=4$`, r`$(1,2),(3,5)$`, false],
    [r`$x=1,y=2;x=3,y=4$`, r`$(2,1),(4,3)$`, false],
    [r`$x=1,y=2;x=3,y=4$`, r`$(1,2)$`, false],
    [r`$x=1,y=2;x=3,y=4$`, r`$(1,2),(3,4),(5,6)$`, false],
    [r`$x=1,y=2;x=2,y=1$`, r`$(1,2),(1,2)$`, false],
    [r`$(1,2),(3,4)$`, r`$x=1,y=2;x=3,y=4$`, true],
    [r`$a=1,b=2;a=3,b=4$`, r`$\boxed{(1, 2)}, \boxed{(3, 4)}$`, true],
    [r`$p=2,q=3;p=3,q=2$`, r`$(2,3)$ and $(3,2)$`, true],
    [r`$a=1,b=2,c=3;a=3,b=2,c=1$`, r`$(3,2,1),(1,2,3)$`, true],
    // Inside brackets `;` is a comma; single items make a plain list.
    [r`$(0;0;0),(4;-2;6)$`, r`$(4,-2,6),(0,0,0)$`, true],
    [r`$1; 2; 3$`, r`$\{1,2,3\}$`, true],
    [r`$1; 2; 3$`, r`$1, 2, 4$`, false],
    [r`$x=1;x=2$`, r`$1,2$`, true],
    [r`$1;-1$`, r`$\pm 1$`, true],
    [r`$(1,2);(3,4)$`, r`$(1,2)$`, false],
  ]);
});

Deno.test("kind 4: a choice letter with or without parentheses in \\text{}", () => {
  check([
    [r`$\text{(B)}$`, r`$B$`, true],
    [r`$B$`, r`$\text{(B)}$`, true],
    [r`$\text{(B)}$`, r`$\text{B}$`, true],
    [r`$\text{(B)}$`, r`$\boxed{B}$`, true],
    [r`$\text{(B)}$`, r`$\textbf{(B)}$`, true],
    [r`$\text{(B)}$`, r`$b$`, true],
    [r`$\mathrm{(B)}$`, r`$B$`, true],
    [r`$\textbf{(C) }$`, r`$C$`, true],
    [r`$\text{(A)}$`, r`The answer is $\boxed{A}$.`, true],
    [r`$\text{(D)}$`, r`$\boxed{(D)}$`, true],
    [r`$\text{(B)}$`, r`$C$`, false],
    [r`$\text{(C)}$`, r`$\text{(D)}$`, false],
    [r`$\textbf{(D)}$`, r`$\boxed{C}$`, false],
    [r`$\text{(B) } 5$`, r`$B$`, false],
    [r`$\text{(B)}$`, r`$\text{(B) } 12$`, false],
  ]);
});

Deno.test("kind 5: leading-dot and comma decimals, by which extractor reads them", () => {
  // Plain text (Math-Verify's expression extractor): `.5` and `0,5` are decimals.
  const plainText: Case[] = [
    ["0.5", ".5", true],
    [r`$\frac12$`, ".5", true],
    ["0,5", "0.5", true],
    ["0,111", "0.111", true],
    ["1,22", "1.22", true],
    ["1000,99", "1000.99", true],
    ["The answer is .75", r`$\frac34$`, true],
    ["2.5", "The answer is 2,5.", true],
    [r`$1.5$`, "the value is 1,5", true],
    ["0.4", ".5", false],
    ["0,5", "0.6", false],
  ];
  // LaTeX: `.5` is 0.5 but `0,5` is the list 0, 5 (only `0,ddd` alone is a decimal).
  const latex: Case[] = [
    [r`$0.5$`, r`$.5$`, true],
    [r`$x = .5$`, r`$\frac12$`, true],
    [r`$\boxed{.5}$`, r`$\frac{1}{2}$`, true],
    [r`$0,111$`, r`$0.111$`, true],
    [r`$0,5$`, r`$0.5$`, false],
    [r`$0.75$`, r`$0,75$`, false],
    [r`$1,22$`, r`$1.22$`, false],
    [r`$3,14$`, "3.14", false],
  ];
  check([...plainText, ...latex]);
  // Plain only: every number is read as plain text, even between dollar signs.
  check([
    ["0.5", ".5", true],
    [".4", "0.4", true],
    ["0,5", "0.5", true],
    ["1000,99", "1000.99", true],
    ["2.5", "The answer is 2,5.", true],
    [r`$0,5$`, r`$0.5$`, true],
    [r`$3,14$`, "3.14", true],
    ["0.4", ".5", false],
    ["0,5", "0.6", false],
  ], { plainOnly: true });
  // LaTeX only: a plain-text number is no answer at all.
  check([
    ...latex,
    ["0.5", ".5", false],
    ["0,5", "0.5", false],
    [r`$\frac34$`, "The answer is .75", false],
    [r`$0.5$`, "x = .5", false],
  ], { latexOnly: true });
});

Deno.test("kind 6: a strict double inequality against the interval it describes", () => {
  check([
    [r`$1 < x < 3$`, r`$(1, 3)$`, true],
    [r`$3 > x > 1$`, r`$(1,3)$`, true],
    [r`$1 \le x < 3$`, r`$[1, 3)$`, true],
    [r`$-1 < x < 1$`, r`$(-1, 1)$`, true],
    [r`$1 < y < 3$`, r`$(1,3)$`, true],
    [r`$0<f(x)<1$`, r`$(0,1)$`, true],
    [r`$\frac12 < x < 2$`, r`$(0.5, 2)$`, true],
    [r`$1 < x < 3$`, r`$x \in (1,3)$`, true],
    [r`$-2 < a < 5$`, r`The interval is $\boxed{(-2,5)}$.`, true],
    [r`$1 < 2x < 6$`, r`$(0.5,3)$`, true],
    [r`$1 < -x < 3$`, r`$(-3,-1)$`, true],
    [r`$x > 1$`, r`$(1, \infty)$`, true],
    [r`$1 < x < 3$`, r`$[1, 3]$`, false],
    [r`$1 < x < 3$`, r`$(1, 3]$`, false],
    [r`$1 < x < 3$`, r`$(1, 4)$`, false],
    [r`$1 < x < 3$`, r`$(3, 1)$`, false],
    [r`$1 < 2x < 6$`, r`$(1,3)$`, false],
    [r`$1 < x < 3$`, r`$(1,3) \cup (4,5)$`, false],
    [r`$x > 2$`, r`$[2, \infty)$`, false],
    // A gold interval meets a predicted relation only with allow_set_relation_comp.
    [r`$(1, 3)$`, r`$1 < x < 3$`, false],
  ]);
  check([[r`$(1, 3)$`, r`$1 < x < 3$`, true]], { allowSetRelation: true });
});

Deno.test("kind 7: a braced set against a tuple or an open interval", () => {
  check([
    // A predicted set against a gold tuple: same elements in the written order.
    [r`$(1, 2)$`, r`$\{1, 2\}$`, true],
    [r`$(1, 2)$`, r`$\{2, 1\}$`, false],
    [r`$(1,2,3)$`, r`$\{1,2,3\}$`, true],
    [r`$(1,2,3)$`, r`$\{3,2,1\}$`, false],
    [r`$(3,1)$`, r`$\{3,1\}$`, true],
    [r`$(1,3)$`, "${1,3}$", true],
    [r`$(-2,2)$`, r`$\pm 2$`, true],
    // A gold set against a predicted tuple: same elements in any order.
    [r`$\{1, 2\}$`, r`$(1, 2)$`, true],
    [r`$\{2, 1\}$`, r`$(1, 2)$`, true],
    [r`$\{1,2,3\}$`, r`$(3,2,1)$`, true],
    [r`$\{-1, 1\}$`, r`$(-1, 1)$`, true],
    // Sizes must agree, and a closed interval is no tuple.
    [r`$(1,2)$`, r`$\{1,2,3\}$`, false],
    [r`$\{1,2\}$`, r`$(1,2,3)$`, false],
    [r`$(1,2)$`, r`$\{1, 1, 2\}$`, false],
    [r`$\{(1,2)\}$`, r`$(1,2)$`, false],
    [r`$[1, 2]$`, r`$\{1, 2\}$`, false],
    [r`$\{1, 2\}$`, r`$[1, 2]$`, false],
    [r`$(1, 2]$`, r`$\{1, 2\}$`, false],
    [r`$(1, 2)$`, r`$\{1, 3\}$`, false],
    [r`$\{2\}$`, r`$2$`, true],
  ]);
});

Deno.test("kind 8: percent written as a word", () => {
  check([
    [r`$50\%$`, "50 percent", true],
    ["50 percent", r`$50\%$`, true],
    [r`$50\%$`, "The answer is 50 percent.", true],
    [r`$50\%$`, "50 percentage", true],
    [r`$50\%$`, "50pct", true],
    [r`$50\%$`, r`$50$ percent`, true],
    [r`$50\%$`, r`$\boxed{50}$ percent`, true],
    [r`$50\%$`, r`$\boxed{50\text{percent}}$`, true],
    [r`$12.5\%$`, "12.5 percent", true],
    [r`$25\%$`, "Final Answer: The final answer is 25 percent. I hope it is correct.", true],
    // A percent is a hundredth...
    [r`$50\%$`, r`$0.5$`, true],
    [r`$\frac12$`, "50 percent", true],
    [r`$50\%$`, r`$50$`, false],
    [r`$50$`, r`$50\%$`, false],
    // ...but a percent word outside the number leaves the answer text "50", which is the text
    // of a bare 50 (Math-Verify also matches the extracted strings).
    [r`$50$`, "50 percent", true],
    [r`$25$`, "25%", true],
    [r`$50\%$`, "40 percent", false],
    [r`$50\%$`, "50 per cent", false],
    [r`$50\%$`, "fifty percent", false],
    // A `\%` inside the math after a box, or a spaced `\text{ percent}`, is dropped.
    [r`$50 \%$`, r`$\boxed{50}\%$`, false],
    [r`$25\%$`, r`$25 \text{ percent}$`, false],
  ]);
});

Deno.test("kind 9: inline math spread over several lines is no math", () => {
  const inline: Case[] = [
    ["$9$", "Answer \\( \n 9 \n \\)", false],
    ["$9$", "Answer \\(\n9\n\\)", false],
    ["$9$", "Answer $ \n 9 \n $", false],
    ["$9$", "We get \\( x = \n 9 \\)", false],
    ["$9$", "x is \\(\n9\\) and more", false],
    ["$7$", "So \\( 6 \\) then \\(\n 7 \n\\)", false],
    ["$9$", "Answer \\( 9 \\)", true],
    ["$7$", "Thus \\(x = 7\\)", true],
    ["$9$", "Answer \\[ \n 9 \n \\]", true],
    ["$9$", "Answer $$ \n 9 \n $$", true],
    ["$7$", "So \\(\n 7 \n\\) and also \\( 7 \\)", true],
    ["$7$", "\\(\n\\boxed{7}\n\\)", true],
    // A bare \frac{a}{b} is math wherever it stands.
    ["$\\frac{1}{2}$", "it is \\(\n\\frac{1}{2}\n\\)", true],
  ];
  check(inline, { latexOnly: true });
  check([
    ...inline,
    // Plain text outside the broken pair is still read: a currency amount, a number before it.
    ["$7$", "costs $7 and \n more", true],
    ["$7$", "the answer is 7 \\(\n x \n\\)", true],
  ]);
  // The expression extractor alone reads numbers wherever they are.
  check([["$9$", "Answer \\( \n 9 \n \\)", true], ["$9$", "Answer $ \n 9 \n $", true]], {
    plainOnly: true,
  });
});
