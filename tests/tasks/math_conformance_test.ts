/**
 * The Math-Verify conformance rows (tests/conformance/): the grader must agree with the expected verdict on
 * every one of them. Prints the pass rate and every disagreeing row (line number, gold, pred,
 * what was extracted and why).
 */
import assert from "node:assert/strict";
import { gradeAnswer, gradeOptions } from "../../engine/tasks/math/mod.ts";

const FILE = new URL("../conformance/math-equivalence.jsonl", import.meta.url);
const REQUIRED_PASS_RATE = 1;

const clip = (s: string) =>
  JSON.stringify(s.length > 90 ? `${s.slice(0, 40)} ... ${s.slice(-45)}` : s);

Deno.test("math equivalence conformance: every row of tests/conformance agrees", async () => {
  const lines = (await Deno.readTextFile(FILE)).split("\n").filter((l) => l.trim() !== "");
  assert.ok(lines.length > 100, `expected the full conformance file, got ${lines.length} rows`);
  const failures: string[] = [];
  lines.forEach((line, i) => {
    const row = JSON.parse(line);
    const r = gradeAnswer(row.gold, row.pred, gradeOptions(row.options));
    if (r.equivalent !== row.equivalent) {
      failures.push(
        `  line ${i + 1} [${row.source}] expected ${row.equivalent}, got ${r.equivalent}: ` +
          `gold ${clip(row.gold)} -> ${JSON.stringify(r.gold.extracted)}; ` +
          `pred ${clip(row.pred)} -> ${JSON.stringify(r.pred.extracted)}; ${r.reason}`,
      );
    }
  });
  const rate = (lines.length - failures.length) / lines.length;
  console.log(
    `math-equivalence conformance: ${lines.length - failures.length}/${lines.length} ` +
      `(${(100 * rate).toFixed(1)}%)` +
      (failures.length ? `; failures:\n${failures.join("\n")}` : ""),
  );
  assert.ok(
    rate >= REQUIRED_PASS_RATE,
    `pass rate ${(100 * rate).toFixed(1)}% is below ${100 * REQUIRED_PASS_RATE}%`,
  );
});
