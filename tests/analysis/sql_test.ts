import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import { requireReadOnlyStatement } from "../../analysis/sql/read-only-statement.ts";
import { runReadOnlyQuery, writeQueryParquet } from "../../analysis/sql/run-query.ts";
import { formatQueryTable } from "../../analysis/sql/format-query-table.ts";
import { sealDuckDB } from "../../analysis/sql/seal-duckdb.ts";
import {
  MalformedSqlError,
  QueryTimeoutError,
  WriteRefusedError,
} from "../../analysis/sql/sql-errors.ts";
import { toCsv } from "../../events/cli/mod.ts";

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

Deno.test("read-only guard: SELECTs pass, everything else is refused by DuckDB's parser", async () => {
  await withConn(async (conn) => {
    for (
      const ok of [
        "SELECT * FROM runs",
        "  -- comment\n WITH x AS (SELECT 1) SELECT * FROM x;",
        "DESCRIBE runs",
        "SHOW TABLES",
        "SUMMARIZE runs",
        "FROM runs",
        "VALUES (1)",
        "TABLE runs",
        "SELECT * FROM runs PIVOT (sum(acc) FOR seed IN (1))",
        "SELECT nope FROM runs", // a binder error, reported when the query runs
      ]
    ) await requireReadOnlyStatement(conn, ok);
    const dir = await Deno.makeTempDir({ prefix: "polyrl-sql-guard-" });
    try {
      for (
        const [write, type] of [
          ["DELETE FROM runs", "DELETE"],
          ["/* x */ insert into runs select * from runs", "INSERT"],
          ["UPDATE runs SET seed = 0", "UPDATE"],
          ["DROP TABLE runs", "DROP"],
          ["CREATE TABLE t (a INT)", "CREATE"],
          [`COPY runs TO '${dir}/x.csv'`, "COPY"],
          [`ATTACH '${dir}/x.duckdb'`, "ATTACH"],
          ["SET threads = 1", "SET"],
          ["RESET lock_configuration", "RESET"],
          ["DELETE FROM no_such_table", "DELETE"],
          ["WITH x AS (SELECT 1) INSERT INTO runs SELECT 'z', 1, 1", "WITH"],
          ["EXPLAIN SELECT 1", "EXPLAIN"],
          ["EXPLAIN ANALYZE UPDATE runs SET seed = 0", "EXPLAIN"],
          ["EXPLAIN ANALYZE DELETE FROM runs", "EXPLAIN"],
          ["EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1", "EXPLAIN"],
          [`EXPLAIN ANALYZE COPY (SELECT 1) TO '${dir}/y.csv'`, "EXPLAIN"],
          [`EXPORT DATABASE '${dir}/export'`, "EXPORT"],
          ["INSTALL httpfs", "INSTALL"],
          ["LOAD json", "LOAD"],
          ["PRAGMA table_info('runs')", "PRAGMA"],
          ["CALL pragma_version()", "CALL"],
          ["CHECKPOINT", "CHECKPOINT"],
        ]
      ) {
        await assert.rejects(
          requireReadOnlyStatement(conn, write),
          (e) =>
            e instanceof WriteRefusedError && e.statementType === type &&
            /statements are not allowed; DuckDB does not read this as a SELECT/.test(e.message),
          write,
        );
      }
      // Nothing was prepared or bound: EXPORT DATABASE did not even create its folder.
      assert.deepEqual([...Deno.readDirSync(dir)], []);
    } finally {
      await Deno.remove(dir, { recursive: true });
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
    await assert.rejects(requireReadOnlyStatement(conn, "-- nothing"), /got 0/);
    await assert.rejects(
      requireReadOnlyStatement(conn, "SELECT 1\0; DELETE FROM runs"),
      (e) => e instanceof MalformedSqlError && /NUL character/.test(e.message),
    );
    // A write after a SELECT, and DuckDB's PIVOT statement (which it runs as two), are several.
    for (const several of ["SELECT 1; DELETE FROM runs", "PIVOT runs ON seed"]) {
      await assert.rejects(
        requireReadOnlyStatement(conn, several),
        (e) => e instanceof MalformedSqlError && /exactly one statement, got 2/.test(e.message),
        several,
      );
    }
    await assert.rejects(
      runReadOnlyQuery(conn, "SELECT nope FROM runs"),
      (e) => e instanceof MalformedSqlError && /Binder Error: .*nope/.test(e.message),
    );
  });
});

Deno.test("query limits: rows are capped and marked, a slow query is interrupted in DuckDB", async () => {
  await withConn(async (conn) => {
    const capped = await runReadOnlyQuery(conn, "SELECT * FROM range(100000)", { maxRows: 10 });
    assert.equal(capped.rows.length, 10);
    assert.equal(capped.truncated, true);
    const whole = await runReadOnlyQuery(conn, "SELECT * FROM range(10)", { maxRows: 10 });
    assert.equal(whole.truncated, false);
    const t0 = performance.now();
    await assert.rejects(
      runReadOnlyQuery(conn, "SELECT count(*) FROM range(1000000000000)", { timeoutMs: 300 }),
      (e) =>
        e instanceof QueryTimeoutError && /longer than 300 ms/.test(e.message) &&
        /--query-timeout-ms/.test(e.message),
    );
    assert.ok(performance.now() - t0 < 5_000, "interrupted, not run to the end");
  });
});

Deno.test("parquet output: the query goes to query() as a value, the one file written is --out", async () => {
  await withConn(async (conn) => {
    const dir = await Deno.makeTempDir({ prefix: "polyrl-sql-parquet-" });
    try {
      // A trailing comment or semicolon cannot reach past the query into the COPY around it.
      await writeQueryParquet(
        conn,
        "SELECT * FROM runs; -- ) TO 'elsewhere.csv'",
        `${dir}/o.parquet`,
      );
      const names = [...Deno.readDirSync(dir)].map((e) => e.name);
      assert.deepEqual(names, ["o.parquet"]);
      const [[n]] = (await conn.runAndReadAll(`SELECT count(*) FROM '${dir}/o.parquet'`))
        .getRowsJS();
      assert.equal(n, 2n);
      await assert.rejects(
        writeQueryParquet(conn, `COPY runs TO '${dir}/x.csv'`, `${dir}/p.parquet`),
        WriteRefusedError,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("sealed DuckDB: settings cannot be changed back; files:none reaches no file", async () => {
  const file = await Deno.makeTempFile({ prefix: "polyrl-sql-seal-" });
  await Deno.writeTextFile(file, "a\n");
  try {
    await withConn(async (conn) => {
      await sealDuckDB(conn, { files: "read" });
      for (
        const set of [
          "SET autoinstall_known_extensions = true",
          "SET lock_configuration = false",
          "RESET lock_configuration",
        ]
      ) await assert.rejects(conn.run(set), /configuration has been locked/, set);
      const [[n]] = (await conn.runAndReadAll(`SELECT count(*) FROM read_text('${file}')`))
        .getRowsJS();
      assert.equal(n, 1n, "the CLI's seal still reads local files");
    });
    await withConn(async (conn) => {
      await sealDuckDB(conn, { files: "none" });
      await assert.rejects(
        conn.run(`SELECT * FROM read_text('${file}')`),
        /file system operations are disabled/,
      );
      await assert.rejects(conn.run("SET enable_external_access = true"), /locked/);
    });
  } finally {
    await Deno.remove(file);
  }
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
