/**
 * Opening (and so migrating) a Postgres store while other schemas of the same database come and
 * go: pg-boss queues of rollout workers, other runs' stores being made and dropped. A store's
 * migration looks only at its own schema, so a table dropped elsewhere mid-open is nothing to it.
 * (Kysely's migrator lists every table of the database, resolving each by name; one dropped
 * between its catalogue scan and that lookup failed the open with `relation "…" does not exist`,
 * seen in CI while the workers tests dropped their schemas.)
 */
import assert from "node:assert/strict";
import pg from "pg";
import { openStore } from "../../events/mod.ts";
import { POSTGRES_URL, postgresTarget } from "./stores.ts";

/** Tables made and dropped in a schema of their own until `stop` resolves; how many. */
async function churn(stop: Promise<void>): Promise<number> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  const schema = `polyrl_churn_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  let done = false;
  stop.then(() => done = true);
  let rounds = 0;
  try {
    await client.query(`CREATE SCHEMA ${schema}`);
    while (!done) {
      const tables = Array.from({ length: 20 }, (_, i) => `${schema}.t${rounds}_${i}`);
      await client.query(tables.map((t) => `CREATE TABLE ${t} (id serial, v text);`).join(""));
      await client.query(`DROP TABLE ${tables.join(", ")}`);
      rounds++;
    }
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
  return rounds;
}

Deno.test({
  name: "postgres: stores open and migrate while tables of other schemas are made and dropped",
  ignore: !POSTGRES_URL,
  async fn() {
    let finish!: () => void;
    const stop = new Promise<void>((resolve) => finish = resolve);
    const churning = churn(stop);
    const failures: string[] = [];
    try {
      for (let i = 0; i < 15; i++) {
        const t = await postgresTarget();
        try {
          const store = await openStore(t.target);
          await store.close();
        } catch (err) {
          failures.push(String(err));
        } finally {
          await t.dispose();
        }
      }
    } finally {
      finish();
    }
    const rounds = await churning;
    assert.ok(rounds > 0, "the other schema's tables came and went meanwhile");
    assert.deepEqual(failures, []);
  },
});
