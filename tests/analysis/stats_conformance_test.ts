/**
 * Every row of the conformance data (tests/conformance/). Tolerances: pass@k (TypeScript and the SQL macro)
 * within 1e-12 absolute (values lie in [0, 1]); Welch's and the paired test's t, df, p and CI bounds
 * within 1e-9 relative (the bound); the exact McNemar test's p within 1e-9 relative.
 */
import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import { VIEWS } from "../../analysis/projections/schema.ts";
import {
  mcnemarExact,
  pairedFromSamples,
  passAtK,
  summarize,
  welchFromSamples,
  welchFromSummary,
} from "../../analysis/stats/mod.ts";

const conformance = new URL("../conformance/", import.meta.url);

async function rows<T>(name: string): Promise<T[]> {
  const text = await Deno.readTextFile(new URL(name, conformance));
  return text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as T);
}

function assertRel(actual: number, expected: number, tol: number, what: string): void {
  const err = Math.abs(actual - expected) / Math.max(Math.abs(expected), Number.MIN_VALUE);
  assert.ok(err <= tol, `${what}: got ${actual}, expected ${expected} (rel err ${err})`);
}

Deno.test("pass@k matches every row of pass-at-k.jsonl within 1e-12", async () => {
  const data = await rows<{ n: number; c: number; k: number; pass_at_k: number }>(
    "pass-at-k.jsonl",
  );
  assert.equal(data.length, 100);
  for (const r of data) {
    const got = passAtK(r.n, r.c, r.k);
    assert.ok(
      Math.abs(got - r.pass_at_k) <= 1e-12,
      `n=${r.n} c=${r.c} k=${r.k}: got ${got}, expected ${r.pass_at_k}`,
    );
  }
});

interface WelchRow {
  a: number[];
  b: number[];
  t: number;
  df: number;
  p: number;
  ci95: [number, number];
}

Deno.test("Welch from samples matches every row of welch.jsonl within 1e-9 relative", async () => {
  const data = await rows<WelchRow>("welch.jsonl");
  assert.equal(data.length, 60);
  data.forEach((r, i) => {
    const w = welchFromSamples(r.a, r.b);
    assertRel(w.t, r.t, 1e-9, `row ${i} t`);
    assertRel(w.df, r.df, 1e-9, `row ${i} df`);
    assertRel(w.p, r.p, 1e-9, `row ${i} p`);
    assertRel(w.ci[0], r.ci95[0], 1e-9, `row ${i} ci low`);
    assertRel(w.ci[1], r.ci95[1], 1e-9, `row ${i} ci high`);
  });
});

Deno.test("the paired t-test matches every row of paired.jsonl (scipy ttest_rel, pearsonr)", async () => {
  const data = await rows<WelchRow & { r: number }>("paired.jsonl");
  assert.equal(data.length, 60);
  data.forEach((r, i) => {
    const p = pairedFromSamples(r.a, r.b);
    assertRel(p.t, r.t, 1e-9, `row ${i} t`);
    assert.equal(p.df, r.df, `row ${i} df`);
    assertRel(p.p, r.p, 1e-9, `row ${i} p`);
    assertRel(p.ci[0], r.ci95[0], 1e-9, `row ${i} ci low`);
    assertRel(p.ci[1], r.ci95[1], 1e-9, `row ${i} ci high`);
    assertRel(p.correlation!, r.r, 1e-9, `row ${i} correlation`);
  });
});

Deno.test("the exact McNemar test matches every row of mcnemar.jsonl (scipy binomtest)", async () => {
  const data = await rows<{ a_only: number; b_only: number; p: number }>("mcnemar.jsonl");
  assert.equal(data.length, 120);
  for (const r of data) {
    assertRel(mcnemarExact(r.a_only, r.b_only).p, r.p, 1e-9, `${r.a_only} vs ${r.b_only}`);
  }
  // scipy refuses n = 0; with no discordant problem nothing tells the two apart.
  assert.equal(mcnemarExact(0, 0).p, 1);
});

Deno.test("Welch from (mean, SEM, n) matches welch.jsonl within 1e-9 relative", async () => {
  for (const [i, r] of (await rows<WelchRow>("welch.jsonl")).entries()) {
    const w = welchFromSummary(summarize(r.a), summarize(r.b));
    assertRel(w.t, r.t, 1e-9, `row ${i} t`);
    assertRel(w.df, r.df, 1e-9, `row ${i} df`);
    assertRel(w.p, r.p, 1e-9, `row ${i} p`);
    assertRel(w.ci[0], r.ci95[0], 1e-9, `row ${i} ci low`);
  }
});

Deno.test("SQL macro pass_at_k matches every row of pass-at-k.jsonl within 1e-12", async () => {
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    await conn.run(VIEWS.find(([name]) => name === "pass_at_k")![1]);
    const data = await rows<{ n: number; c: number; k: number; pass_at_k: number }>(
      "pass-at-k.jsonl",
    );
    await conn.run("CREATE TABLE cases (n BIGINT, c BIGINT, k BIGINT, expected DOUBLE)");
    const appender = await conn.createAppender("cases");
    for (const r of data) {
      appender.appendBigInt(BigInt(r.n));
      appender.appendBigInt(BigInt(r.c));
      appender.appendBigInt(BigInt(r.k));
      appender.appendDouble(r.pass_at_k);
      appender.endRow();
    }
    appender.closeSync();
    const [row] = (await conn.runAndReadAll(
      // count(expr) skips NULLs, so it proves every row got a value (max() alone would not).
      "SELECT count(pass_at_k(n, c, k)) AS n, max(abs(pass_at_k(n, c, k) - expected)) AS err " +
        "FROM cases",
    )).getRowObjectsJS();
    assert.equal(row.n, 100n);
    assert.ok((row.err as number) <= 1e-12, `max error ${row.err}`);
    // Hand cases the conformance rows do not hold: no correct sample (an empty product) and k = n.
    const [hand] = (await conn.runAndReadAll(
      "SELECT pass_at_k(4, 0, 4) AS none, pass_at_k(4, 1, 4) AS one, pass_at_k(4, 1, 2) AS half",
    )).getRowObjectsJS();
    assert.deepEqual(hand, { none: 0, one: 1, half: 0.5 });
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
});
