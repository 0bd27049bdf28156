/**
 * `deno task bench grading`: throughput of the answer grader on the conformance rows (tests/conformance/),
 * in-process and through the time-limited child runner, and the ratio between the two (the
 * price of a real per-item time limit).
 */
import { gradeAnswer, gradeOptions, GradeRunner } from "../../engine/tasks/math/mod.ts";

const FILE = new URL("../conformance/math-equivalence.jsonl", import.meta.url);

export async function run(): Promise<void> {
  const rows = (await Deno.readTextFile(FILE)).split("\n").filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));
  const repeats = 5;
  let t = performance.now();
  for (let i = 0; i < repeats; i++) {
    for (const r of rows) gradeAnswer(r.gold, r.pred, gradeOptions(r.options));
  }
  const inProcess = (performance.now() - t) / (repeats * rows.length);
  const runner = new GradeRunner({ timeoutMs: 10_000 });
  await runner.grade("1", "1", gradeOptions(undefined)); // start-up is not per item
  t = performance.now();
  for (const r of rows) await runner.grade(r.gold, r.pred, gradeOptions(r.options));
  const viaChild = (performance.now() - t) / rows.length;
  await runner.close();
  console.log(`grading: ${rows.length} conformance rows`);
  console.log(`  in-process      ${(1000 * inProcess).toFixed(0)} us/item`);
  console.log(`  child runner    ${(1000 * viaChild).toFixed(0)} us/item`);
  console.log(`  runner/inproc   ${(viaChild / inProcess).toFixed(1)}x`);
}
