import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import { BenchmarkFileError, loadBenchmark } from "../../engine/tasks/benchmark/mod.ts";

async function withDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-bench-" });
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";

Deno.test("benchmark: MATH-500 JSONL shape (problem, solution, answer, unique_id)", async () => {
  await withDir(async (dir) => {
    const file = `${dir}/math500.jsonl`;
    await Deno.writeTextFile(
      file,
      jsonl([{
        problem: "Convert $(0,3)$ to polar coordinates.",
        solution: "... so $\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}$.",
        answer: "\\left( 3, \\frac{\\pi}{2} \\right)",
        subject: "Precalculus",
        level: 2,
        unique_id: "test/precalculus/807.json",
      }]),
    );
    const [p] = await loadBenchmark(file);
    assert.equal(p.id, "test/precalculus/807.json");
    assert.equal(p.answer, "\\left( 3, \\frac{\\pi}{2} \\right)");
    assert.equal(p.row, 1);
    assert.match(p.solution!, /boxed/);
  });
});

Deno.test("benchmark: AMC numeric answers, Minerva question + boxed solution, GSM8K ####", async () => {
  await withDir(async (dir) => {
    const file = `${dir}/mixed.jsonl`;
    await Deno.writeTextFile(
      file,
      jsonl([
        { id: 0, problem: "AMC problem", answer: 142.0, url: "https://example.org" },
        {
          question: "Minerva question",
          solution: "Thus $\\boxed{\\frac{1}{2}}$ and \\boxed{7.5e3}",
        },
        { question: "GSM8K question", answer: "Natalia sold 48/2 = 24 clips.\n#### 72" },
      ]),
    );
    const problems = await loadBenchmark(file);
    assert.deepEqual(problems.map((p) => p.answer), ["142", "7.5e3", "72"]);
    assert.deepEqual(problems.map((p) => p.id), ["0", "mixed.jsonl#2", "mixed.jsonl#3"]);
    assert.equal(problems[1].problem, "Minerva question");
  });
});

Deno.test("benchmark: Parquet through DuckDB (AIME shape, bigint ids)", async () => {
  await withDir(async (dir) => {
    const file = `${dir}/aime.parquet`;
    const instance = await DuckDBInstance.create(":memory:");
    const c = await instance.connect();
    await c.run(
      `COPY (SELECT * FROM (VALUES (60::BIGINT, 'Every morning Aya...', 'so 204', '204'),
        (61::BIGINT, 'Let ABC be a triangle...', 'thus \\boxed{113}', NULL))
        t(id, problem, solution, answer)) TO '${file}' (FORMAT parquet)`,
    );
    c.closeSync();
    instance.closeSync();
    const problems = await loadBenchmark(file);
    assert.deepEqual(problems.map((p) => [p.id, p.answer, p.row]), [["60", "204", 1], [
      "61",
      "113",
      2,
    ]]);
  });
});

Deno.test("benchmark: errors name the file and the line or row", async () => {
  await withDir(async (dir) => {
    const bad = `${dir}/bad.jsonl`;
    await Deno.writeTextFile(bad, jsonl([{ problem: "ok", answer: "1" }]) + "{oops\n");
    await assert.rejects(
      loadBenchmark(bad),
      (e: unknown) =>
        e instanceof BenchmarkFileError && e.message.startsWith(`${bad} line 2: invalid JSON`),
    );

    const noProblem = `${dir}/noproblem.jsonl`;
    await Deno.writeTextFile(
      noProblem,
      jsonl([{ problem: "ok", answer: "1" }, { text: "x", answer: "2" }]),
    );
    await assert.rejects(
      loadBenchmark(noProblem),
      /noproblem.jsonl line 2: no problem text \(looked for problem\/question.*keys present: text, answer\)/,
    );

    const noAnswer = `${dir}/noanswer.json`;
    await Deno.writeTextFile(noAnswer, JSON.stringify([{ problem: "a", solution: "no box here" }]));
    await assert.rejects(loadBenchmark(noAnswer), /noanswer.json row 1: no answer/);

    const pq = `${dir}/broken.parquet`;
    await Deno.writeTextFile(pq, "not parquet");
    await assert.rejects(loadBenchmark(pq), /broken.parquet: cannot read as Parquet/);

    await assert.rejects(loadBenchmark(`${dir}/missing.jsonl`), /missing.jsonl: cannot open/);
    await assert.rejects(loadBenchmark(`${dir}/data.csv`), /data.csv: unknown format .csv/);
  });
});
