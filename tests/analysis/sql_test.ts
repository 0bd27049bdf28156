import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import { requireReadOnlyStatement } from "../../analysis/sql/read-only-statement.ts";
import { runReadOnlyQuery } from "../../analysis/sql/run-query.ts";
import { formatQueryTable } from "../../analysis/sql/format-query-table.ts";
import { MalformedSqlError, WriteRefusedError } from "../../analysis/sql/sql-errors.ts";
import { toCsv } from "../../analysis/format/csv.ts";

async function withConn(
  body: (conn: Awaited<ReturnType<DuckDBInstance["connect"]>>) => Promise<void>,
) {
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    await conn.run("CREATE TABLE runs (run_id VARCHAR, seed BIGINT, acc DOUBLE)");
    await conn.run("INSERT INTO runs VALUES ('a', 1, 0.5), ('b,\"c\"', 9007199254740993, NULL)");
    await body(conn);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

Deno.test("read-only guard: reads pass, every kind of write is refused by statement type", async () => {
  await withConn(async (conn) => {
    for (
      const ok of [
        "SELECT * FROM runs",
        "  -- comment\n WITH x AS (SELECT 1) SELECT * FROM x;",
        "DESCRIBE runs",
        "SHOW TABLES",
        "SUMMARIZE runs",
        "EXPLAIN SELECT 1",
        "FROM runs",
      ]
    ) await requireReadOnlyStatement(conn, ok);
    for (
      const [write, type] of [
        ["DELETE FROM runs", "DELETE"],
        ["/* x */ insert into runs select * from runs", "INSERT"],
        ["UPDATE runs SET seed = 0", "UPDATE"],
        ["DROP TABLE runs", "DROP"],
        ["CREATE TABLE t (a INT)", "CREATE"],
        ["COPY runs TO '/tmp/x.csv'", "COPY"],
        ["ATTACH 'x.duckdb'", "ATTACH"],
        ["SET threads = 1", "SET"],
        ["DELETE FROM no_such_table", "DELETE"],
        ["WITH x AS (SELECT 1) INSERT INTO runs SELECT 'z', 1, 1", "INSERT"],
      ]
    ) {
      await assert.rejects(
        requireReadOnlyStatement(conn, write),
        (e) => e instanceof WriteRefusedError && e.statementType === type,
        write,
      );
    }
    const [{ n }] = (await conn.runAndReadAll("SELECT count(*) AS n FROM runs")).getRowObjectsJS();
    assert.equal(n, 2n, "nothing was written");
  });
});

Deno.test("read-only guard: malformed SQL and several statements are named", async () => {
  await withConn(async (conn) => {
    await assert.rejects(
      requireReadOnlyStatement(conn, "SELEC 1"),
      (e) => e instanceof MalformedSqlError && /syntax error at or near "SELEC"/.test(e.message),
    );
    await assert.rejects(
      requireReadOnlyStatement(conn, "SELECT 1; SELECT 2"),
      /expected exactly one statement, got 2/,
    );
    await assert.rejects(
      requireReadOnlyStatement(conn, "SELECT nope FROM runs"),
      /Binder Error: .*nope/,
    );
  });
});

Deno.test("query output: table, CSV quoting, JSON with big integers as strings", async () => {
  await withConn(async (conn) => {
    const t = await runReadOnlyQuery(conn, "SELECT * FROM runs ORDER BY seed");
    assert.equal(
      formatQueryTable(t, "csv"),
      'run_id,seed,acc\na,1,0.5\n"b,""c""",9007199254740993,\n',
    );
    assert.deepEqual(JSON.parse(formatQueryTable(t, "json")), [
      { run_id: "a", seed: 1, acc: 0.5 },
      { run_id: 'b,"c"', seed: "9007199254740993", acc: null },
    ]);
    assert.equal(
      formatQueryTable(t, "table"),
      [
        "+--------+------------------+-----+",
        "| run_id | seed             | acc |",
        "+--------+------------------+-----+",
        "| a      |                1 | 0.5 |",
        '| b,"c"  | 9007199254740993 |     |',
        "+--------+------------------+-----+",
        "(2 rows)",
      ].join("\n"),
    );
    assert.equal(toCsv(["x"], [["line\nbreak"]]), 'x\n"line\nbreak"\n');
  });
});
