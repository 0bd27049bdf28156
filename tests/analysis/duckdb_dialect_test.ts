import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import { Kysely, sql } from "kysely";
import { DuckDBDialect, UnsafeIntegerError } from "../../analysis/duckdb/mod.ts";

interface Tables {
  runs: { id: string; seed: number; acc: number; started: Date | null };
}

async function withDb(
  body: (db: Kysely<Tables>, instance: DuckDBInstance) => Promise<void>,
  bigint: "number" | "bigint" = "number",
): Promise<void> {
  const instance = await DuckDBInstance.create(":memory:");
  const db = new Kysely<Tables>({ dialect: new DuckDBDialect({ instance, bigint }) });
  try {
    await db.schema.createTable("runs")
      .addColumn("id", "varchar", (c) => c.primaryKey())
      .addColumn("seed", "integer")
      .addColumn("acc", "float8")
      .addColumn("started", "timestamptz")
      .execute();
    await body(db, instance);
  } finally {
    await db.destroy();
    instance.closeSync();
  }
}

Deno.test("DuckDB dialect: parameters, count(*) as a number, affected rows", async () => {
  await withDb(async (db) => {
    const inserted = await db.insertInto("runs").values([
      { id: "a", seed: 1, acc: 0.5, started: null },
      { id: "b", seed: 2, acc: 0.25, started: null },
      { id: "c'x", seed: 3, acc: 1, started: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)) },
    ]).executeTakeFirstOrThrow();
    assert.equal(inserted.numInsertedOrUpdatedRows, 3n);
    const { n, total } = await db.selectFrom("runs")
      .select((eb) => [eb.fn.countAll<number>().as("n"), eb.fn.sum<number>("seed").as("total")])
      .executeTakeFirstOrThrow();
    assert.equal(n, 3);
    assert.equal(typeof n, "number");
    assert.equal(total, 6);
    const rows = await db.selectFrom("runs").selectAll().where("seed", ">=", 2)
      .where("id", "=", "c'x").execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0].started?.toISOString(), "2026-01-02T03:04:05.000Z");
    const updated = await db.updateTable("runs").set({ acc: 0 }).where("seed", "<", 3)
      .executeTakeFirstOrThrow();
    assert.equal(updated.numUpdatedRows, 2n);
    const back = await db.insertInto("runs").values({ id: "d", seed: 4, acc: 0.75, started: null })
      .returning(["id", "seed"]).execute();
    assert.deepEqual(back, [{ id: "d", seed: 4 }]);
    const mean = await db.selectFrom("runs").select((eb) => eb.fn.avg<number>("acc").as("m"))
      .executeTakeFirstOrThrow();
    assert.equal(mean.m, (0 + 0 + 1 + 0.75) / 4);
  });
});

Deno.test("DuckDB dialect: bigint mode keeps bigint; number mode refuses unsafe integers", async () => {
  await withDb(async (db) => {
    const big = await sql<{ v: bigint }>`SELECT ${2n ** 60n}::BIGINT AS v`.execute(db);
    assert.equal(big.rows[0].v, 2n ** 60n);
    const n = await sql<{ n: bigint }>`SELECT count(*) AS n FROM runs`.execute(db);
    assert.equal(n.rows[0].n, 0n);
  }, "bigint");
  await withDb(async (db) => {
    await assert.rejects(
      sql`SELECT (2::BIGINT ** 60)::BIGINT AS huge`.execute(db),
      (e) => e instanceof UnsafeIntegerError && e.column === "huge",
    );
    const list = await sql<{ xs: number[] }>`SELECT [1::BIGINT, 2::BIGINT] AS xs`.execute(db);
    assert.deepEqual(list.rows[0].xs, [1, 2]);
  });
});

Deno.test("DuckDB dialect: transactions commit and roll back on one connection", async () => {
  await withDb(async (db) => {
    await db.transaction().execute(async (tx) => {
      await tx.insertInto("runs").values({ id: "t1", seed: 1, acc: 1, started: null }).execute();
    });
    await assert.rejects(
      db.transaction().execute(async (tx) => {
        await tx.insertInto("runs").values({ id: "t2", seed: 2, acc: 1, started: null }).execute();
        throw new Error("abort on purpose");
      }),
      /abort on purpose/,
    );
    const ids = await db.selectFrom("runs").select("id").execute();
    assert.deepEqual(ids.map((r) => r.id), ["t1"]);
  });
});

Deno.test("DuckDB dialect: streaming, quoted identifiers and introspection", async () => {
  await withDb(async (db) => {
    await sql`INSERT INTO runs SELECT 'r' || i, i, i / 10, NULL FROM range(2500) t(i)`.execute(db);
    let seen = 0;
    for await (const row of db.selectFrom("runs").select("seed").orderBy("seed").stream(1000)) {
      assert.equal(row.seed, seen++);
    }
    assert.equal(seen, 2500);
    const odd = await sql<{ 'we"ird': number }>`SELECT 1 AS ${sql.ref('we"ird')}`.execute(db);
    assert.deepEqual(odd.rows, [{ 'we"ird': 1 }]);
    const tables = await db.introspection.getTables();
    const runs = tables.find((t) => t.name === "runs");
    assert.deepEqual(runs?.columns.map((c) => [c.name, c.dataType]), [
      ["id", "VARCHAR"],
      ["seed", "INTEGER"],
      ["acc", "DOUBLE"],
      ["started", "TIMESTAMP WITH TIME ZONE"],
    ]);
  });
});

Deno.test("DuckDB dialect: malformed SQL surfaces DuckDB's parser error", async () => {
  await withDb(async (db) => {
    await assert.rejects(sql`SELEC 1`.execute(db), /syntax error at or near "SELEC"/);
  });
});
