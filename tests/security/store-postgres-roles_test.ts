/**
 * A Postgres role with SELECT only reads a store: `verify`, `sql` and `report` run through it,
 * and nothing is created or changed (no CREATE SCHEMA, no migration). A role without USAGE on
 * the schema gets one line naming the missing grant.
 */
import assert from "node:assert/strict";
import pg from "pg";
import { openStore } from "../../events/mod.ts";
import { errorLines, runCli, runsStore, withTempDir } from "./store-helpers.ts";
import { POSTGRES_URL, postgresTarget } from "../events/stores.ts";

/** Runs `fn` with a superuser client on the test server. */
async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The store URL as seen by `role` (password set, so the test runs under any authentication). */
function asRole(target: string, role: string): string {
  const url = new URL(target);
  url.username = role;
  url.password = `pw-${role}`;
  return url.toString();
}

/** The tables of `schema` and a digest of its rows: what a reader must leave as it found it. */
async function contents(client: pg.Client, schema: string): Promise<string> {
  const tables = await client.query(
    "SELECT string_agg(c.relname, ',' ORDER BY c.relname) AS names FROM pg_class c " +
      "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'",
    [schema],
  );
  const rows = await client.query(
    `SELECT (SELECT md5(string_agg(hash, '' ORDER BY position)) FROM ${schema}.events) AS events, ` +
      `(SELECT md5(string_agg(hash, '' ORDER BY hash)) FROM ${schema}.blobs) AS blobs, ` +
      `(SELECT string_agg(name, ',' ORDER BY name) FROM ${schema}.kysely_migration) AS migrations`,
  );
  return JSON.stringify({ tables: tables.rows[0].names, ...rows.rows[0] });
}

/** verify, sql and report through the store URL of a SELECT-only role, run in `cwd`. */
async function readAsRole(store: string, cwd: string, verified: RegExp): Promise<void> {
  const verify = await runCli("events/cli/verify.ts", ["--store", store], cwd);
  assert.equal(verify.code, 0, verify.stderr);
  assert.match(verify.stdout, verified);
  assert.doesNotMatch(verify.stdout, /pw-/);

  const sql = await runCli("analysis/cli/sql.ts", [
    "SELECT run_id FROM runs ORDER BY 1",
    "--format",
    "csv",
    "--store",
    store,
  ], cwd);
  assert.equal(sql.code, 0, sql.stderr);
  assert.equal(sql.stdout, "run_id\nrun-a\nrun-b\n");

  const report = await runCli(
    "analysis/cli/report.ts",
    ["--format", "json", "--store", store],
    cwd,
  );
  assert.equal(report.code, 0, report.stderr);
}

Deno.test({
  name: "Postgres: a SELECT-only role runs verify, sql and report; a role without USAGE is told",
  ignore: !POSTGRES_URL,
  async fn() {
    const { target, dispose } = await postgresTarget();
    const schema = new URL(target).searchParams.get("schema")!;
    const reader = `${schema}_reader`;
    const stranger = `${schema}_stranger`;
    try {
      const written = await runsStore(target, ["run-a", "run-b"]);
      const before = await admin(async (client) => {
        for (const role of [reader, stranger]) {
          await client.query(`CREATE ROLE ${role} LOGIN PASSWORD 'pw-${role}'`);
        }
        await client.query(`GRANT USAGE ON SCHEMA ${schema} TO ${reader}`);
        await client.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${reader}`);
        return await contents(client, schema);
      });
      const store = asRole(target, reader);
      await withTempDir((cwd) => readAsRole(store, cwd, written.verified));

      const opened = await openStore(store, { readOnly: true });
      assert.equal(await opened.lastPosition(), written.events);
      assert.match(opened.storeId ?? "", /^[0-9a-f-]{36}$/);
      await opened.close();

      const refused = await runCli("events/cli/verify.ts", [
        "--store",
        asRole(target, stranger),
      ]);
      assert.equal(refused.code, 1);
      assert.deepEqual(errorLines(refused).length, 1, refused.stderr);
      assert.match(
        errorLines(refused)[0],
        new RegExp(
          `permission denied to user ${stranger} \\(permission denied for schema ${schema}\\); ` +
            `reading a store needs USAGE on schema ${schema} and SELECT on its tables`,
        ),
      );
      assert.equal(await admin((client) => contents(client, schema)), before);
    } finally {
      await admin(async (client) => {
        for (const role of [reader, stranger]) {
          await client.query(`DROP OWNED BY ${role}`).catch(() => {});
          await client.query(`DROP ROLE IF EXISTS ${role}`);
        }
      });
      await dispose();
    }
  },
});
