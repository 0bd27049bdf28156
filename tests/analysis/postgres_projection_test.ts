/**
 * Projections read events only through the EventStore API, so a Postgres store projects to the
 * same tables as an SQLite store holding the same events.
 */
import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import pg from "pg";
import { openStore } from "../../events/mod.ts";
import { catchUp } from "../../analysis/projections/projector.ts";
import { runSpec, tempStore } from "./fixtures/fill-store.ts";
import { writeFakeRun } from "../support/fake-run.ts";

const url = Deno.env.get("POLYRL_TEST_POSTGRES_URL");

const QUERIES = [
  // started_at and ended_at are wall-clock append times, which differ between two stores.
  "SELECT * EXCLUDE (started_at, ended_at) FROM runs",
  "SELECT run_id, count(*) AS n FROM turns GROUP BY ALL",
  "SELECT * FROM eval_summary",
  "SELECT * FROM advantages",
  "SELECT * FROM grad_steps",
];

async function project(target: string): Promise<string> {
  const store = await openStore(target);
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    await catchUp(conn, store);
    const parts: string[] = [];
    for (const q of QUERIES) {
      const rows = (await conn.runAndReadAll(`${q} ORDER BY ALL`)).getRowObjectsJS();
      parts.push(JSON.stringify(rows, (_k, v) => typeof v === "bigint" ? `${v}n` : v));
    }
    return parts.join("\n");
  } finally {
    conn.closeSync();
    instance.closeSync();
    await store.close();
  }
}

Deno.test({
  name: "projections: a Postgres store projects the same tables as an SQLite store",
  ignore: !url,
  async fn() {
    const schema = `analysis_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const pgTarget = `${url}${url!.includes("?") ? "&" : "?"}schema=${schema}`;
    const { store, dir } = await tempStore();
    const pgStore = await openStore(pgTarget);
    try {
      const spec = runSpec({ runId: "pg-run", estimator: "dr-mas", steps: 1 });
      await writeFakeRun(store, spec);
      await writeFakeRun(pgStore, spec);
      await pgStore.close();
      await store.close();
      const fromSqlite = await project(`${dir}/events.sqlite`);
      assert.match(
        fromSqlite,
        /"run_id":"pg-run","n":"[1-9]\d*n"/,
        "the projection holds the run's turns",
      );
      assert.equal(await project(pgTarget), fromSqlite);
    } finally {
      await Deno.remove(dir, { recursive: true });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    }
  },
});
