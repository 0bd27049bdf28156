import assert from "node:assert/strict";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { appendRows, ProjectionRowError } from "../../analysis/projections/append-rows.ts";
import { ensureSchema } from "../../analysis/projections/projector.ts";
import { TABLES } from "../../analysis/projections/schema.ts";
import { mulberry32 } from "../support/mulberry32.ts";

// Strings around the 12-byte inline limit, non-ASCII ones whose UTF-16 length is at most 12,
// and longer ones; integers across the 32-bit word boundary and the safe range; every special
// double.
const STRINGS = [
  "",
  "a",
  "wg0",
  "exactly12byt",
  "thirteen-byte",
  "é",
  "日本語",
  "🙂🙂🙂🙂🙂🙂",
  "tab\there",
  '{"loss":0.5,"kl":"NaN"}',
  "x".repeat(300),
];
const INTEGERS = [0, -0, 1, -1, 2 ** 32 - 1, 2 ** 32, -(2 ** 32), 1_733_000_000_000, 2 ** 53 - 1];
const DOUBLES = [0, -0, 1.5, -1e-300, 1e300, NaN, Infinity, -Infinity];

/** grad_steps has columns of all four types: `[name, type]` in column order. */
const COLUMNS = TABLES.grad_steps.columnList.map(([name, c]) => [name, c.type] as const);

function pick<T>(xs: readonly T[], rand: () => number): T {
  return xs[Math.floor(rand() * xs.length)];
}

/** `n` rows of random values (a null in about one cell in eight). */
function randomRows(n: number, seed: number): unknown[][] {
  const rand = mulberry32(seed);
  const rows: unknown[][] = [];
  for (let i = 0; i < n; i++) {
    rows.push(COLUMNS.map(([, type]) => {
      if (rand() < 0.125) return null;
      if (type === "VARCHAR") return pick(STRINGS, rand);
      if (type === "BIGINT") return pick(INTEGERS, rand) * (rand() < 0.5 ? -1 : 1);
      if (type === "DOUBLE") return pick(DOUBLES, rand);
      return rand() < 0.5;
    }));
  }
  return rows;
}

/** The reference: DuckDB's appender called once per value. */
async function appendValueByValue(conn: DuckDBConnection, rows: unknown[][]): Promise<void> {
  const appender = await conn.createAppender("grad_steps");
  for (const row of rows) {
    COLUMNS.forEach(([, type], i) => {
      const v = row[i];
      if (v === null) appender.appendNull();
      else if (type === "VARCHAR") appender.appendVarchar(v as string);
      else if (type === "BIGINT") appender.appendBigInt(BigInt(v as number));
      else if (type === "DOUBLE") appender.appendDouble(v as number);
      else appender.appendBoolean(v as boolean);
    });
    appender.endRow();
  }
  appender.closeSync();
}

/** The table's rows in insertion order, every value spelled out (-0, NaN and bigints too). */
async function dump(conn: DuckDBConnection): Promise<string[]> {
  const reader = await conn.runAndReadAll("SELECT * FROM grad_steps");
  return reader.getRows().map((row) =>
    row.map((v) =>
      typeof v === "number" && Object.is(v, -0) ? "-0" : typeof v === "bigint" ? `${v}n` : String(v)
    ).join("|")
  );
}

async function withTable<T>(body: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    await ensureSchema(conn);
    return await body(conn);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

Deno.test("appendRows writes what the value-by-value appender writes, across chunk boundaries", async () => {
  const rows = randomRows(5000, 7);
  const expected = await withTable(async (conn) => {
    await appendValueByValue(conn, rows);
    return await dump(conn);
  });
  const actual = await withTable(async (conn) => {
    await appendRows(conn, new Map([["grad_steps", rows]]));
    return await dump(conn);
  });
  assert.equal(actual.length, rows.length);
  assert.deepEqual(actual, expected);
});

Deno.test("appendRows: inline and long strings compare, group and measure like any other", async () => {
  const rows = STRINGS.map((s, i) =>
    COLUMNS.map(([name]) => name === "wg" ? s : name === "step" ? i : null)
  );
  await withTable(async (conn) => {
    await appendRows(conn, new Map([["grad_steps", rows]]));
    const read = (await conn.runAndReadAll(
      "SELECT wg, length(wg) AS n, wg = 'exactly12byt' AS hit FROM grad_steps ORDER BY step",
    )).getRowObjectsJS();
    assert.deepEqual(read.map((r) => r.wg), STRINGS);
    assert.deepEqual(read.map((r) => Number(r.n)), STRINGS.map((s) => [...s].length));
    assert.deepEqual(read.map((r) => r.hit), STRINGS.map((s) => s === "exactly12byt"));
    const groups = (await conn.runAndReadAll(
      "SELECT count(DISTINCT wg) AS n FROM (SELECT wg FROM grad_steps UNION ALL SELECT 'wg0')",
    )).getRowObjectsJS();
    assert.equal(Number(groups[0].n), STRINGS.length);
  });
});

Deno.test("appendRows names the table, column and value that does not fit", async () => {
  await withTable(async (conn) => {
    for (const [column, bad] of [["step", 1.5], ["wg", 3], ["loss", "x"], ["step", 2 ** 53]]) {
      const row = COLUMNS.map(([name]) => name === column ? bad : null);
      await assert.rejects(
        () => appendRows(conn, new Map([["grad_steps", [row]]])),
        (err: unknown) =>
          err instanceof ProjectionRowError && err.table === "grad_steps" &&
          err.column === column && err.value === bad,
      );
    }
  });
});
