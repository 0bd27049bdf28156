/**
 * SQL that used to kill the real dashboard (`deno task web`), or hold it: `enable_logging` with
 * file storage, through POST /api/sql or a cross-site GET of the Compare page's `where=`, left the
 * sealed instance failing every query and the process aborting (`terminate called after throwing
 * duckdb::PermissionException`) at the next connection it closed; RESET ALL and IMPORT DATABASE
 * answered 500; `SELECT repeat('x', 600000000)` answered long past its time limit with 1.6 GB in
 * the process. Each is now refused (4xx, named), the dashboard keeps serving, its process exits
 * cleanly, the response is bounded in bytes and time, nothing is written where the attacks aim,
 * and the store and projections are byte-identical.
 */
import assert from "node:assert/strict";
import { attackedStore, fileDigests } from "./sql-files.ts";
import { type RunningDashboard, startDashboard } from "./web-server.ts";

const JSON_TYPE = { "content-type": "application/json" };
const TIMEOUT_MS = 3000;
/** withDeadline's INTERRUPT_GRACE_MS, and room for a loaded machine. */
const ANSWER_SLACK_MS = 1000 + 4000;

function postSql(web: RunningDashboard, sql: string) {
  return fetch(`${web.url}/api/sql`, {
    method: "POST",
    headers: JSON_TYPE,
    body: JSON.stringify({ sql }),
  });
}

async function expectStatus(res: Response | Promise<Response>, status: number, body: RegExp) {
  const r = await res;
  const text = await r.text();
  assert.equal(r.status, status, text.slice(0, 300));
  assert.match(text, body);
  return text;
}

/** The dashboard still answers: a page, and a query on a fresh connection of the SQL instance. */
async function alive(web: RunningDashboard) {
  await expectStatus(fetch(`${web.url}/`), 200, /grpo-s1/);
  await expectStatus(postSql(web, "SELECT count(*) FROM runs"), 200, /\[\[5\]\]/);
  await expectStatus(postSql(web, "SELECT 41 + 1"), 200, /\[\[42\]\]/);
}

Deno.test("dashboard SQL cannot switch DuckDB's logging, profiling or parser, or outgrow its limits", async (t) => {
  await using store = await attackedStore();
  {
    // The first start projects the store; the attacks run on a second one.
    await using warm = await startDashboard(store.path);
    await expectStatus(fetch(`${warm.url}/`), 200, /grpo-s1/);
  }
  const before = await fileDigests(store.dir);
  const target = store.target;
  const web = await startDashboard(store.path, ["--query-timeout-ms", String(TIMEOUT_MS)]);
  try {
    await t.step(
      "logging, profiling, parser and SQL-text functions: 403, then served",
      async () => {
        for (
          const sql of [
            `SELECT * FROM enable_logging(storage='file', storage_path='${target}/logs')`,
            `SELECT * FROM enable_logging(storage='stdout')`,
            `SELECT write_log('a,b', level := 'error', log_type := 'x')`,
            `SELECT * FROM enable_profiling(format='json', save_location='${target}/p.json')`,
            "SELECT * FROM disable_profiling()",
            "SELECT * FROM disable_logging()",
            "SELECT * FROM truncate_duckdb_logs()",
            "SELECT * FROM enable_peg_parser()",
            "SELECT json_serialize_sql('SELECT 1')",
            "SELECT json_serialize_plan('SELECT 1')",
            `FROM query('FROM enable_logging(storage=''file'', storage_path=''${target}/q'')')`,
            "SELECT 1 WHERE (SELECT count(*) FROM system.main.ENABLE_LOGGING()) = 0",
          ]
        ) {
          await expectStatus(
            postSql(web, sql),
            403,
            /refused: the function \w+\(\) is not allowed/,
          );
          await alive(web);
        }
        // Reading the logs is harmless, and allowed.
        await expectStatus(postSql(web, "SELECT count(*) FROM duckdb_logs"), 200, /\[\[\d+\]\]/);
      },
    );

    await t.step("the Compare page's where=, a cross-site GET: refused, then served", async () => {
      const where = `(SELECT count(*) FROM enable_logging(storage='file', ` +
        `storage_path='${target}/compare')) = 0`;
      const res = await fetch(`${web.url}/compare?where=${encodeURIComponent(where)}`, {
        headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" },
      });
      const text = await res.text();
      assert.ok(res.status >= 400 && res.status < 500, `${res.status}: ${text.slice(0, 300)}`);
      if (res.status === 400) assert.match(text, /the function enable_logging\(\) is not allowed/);
      await alive(web);
      await expectStatus(fetch(`${web.url}/compare`), 200, /Compare/);
    });

    await t.step("RESET ALL and IMPORT DATABASE: 403 naming the statement", async () => {
      await expectStatus(postSql(web, "RESET ALL"), 403, /refused: RESET statements/);
      await expectStatus(
        postSql(web, `IMPORT DATABASE '${target}'`),
        403,
        /refused: IMPORT statements/,
      );
      await expectStatus(postSql(web, "SELECT 1; RESET ALL"), 400, /exactly one statement, got 2/);
      await alive(web);
    });

    await t.step("user SQL's instance: a memory limit, nothing spilled to disk", async () => {
      await expectStatus(
        postSql(
          web,
          "SELECT current_setting('memory_limit'), current_setting('temp_directory'), " +
            "current_setting('lock_configuration')",
        ),
        200,
        /\[\["953\.6 MiB","",true\]\]/,
      );
    });

    await t.step(
      "results are capped in bytes: cut short, or refused when one row is over",
      async () => {
        const wide = await postSql(web, "SELECT repeat('x', 10000) AS s FROM range(5000)");
        const body = await wide.text();
        assert.equal(wide.status, 200, body.slice(0, 300));
        const result = JSON.parse(body) as { rows: unknown[]; truncated: boolean };
        assert.equal(result.truncated, true);
        assert.ok(result.rows.length > 1000 && result.rows.length < 5000, `${result.rows.length}`);
        assert.ok(body.length <= 33 * 1024 * 1024, `${body.length} bytes`);
        await expectStatus(
          // A list of 2 million numbers: 1 row, and over 32 MiB as JSON.
          postSql(web, "SELECT list(range) AS numbers FROM range(2000000)"),
          413,
          /first row is over \d+ bytes/,
        );
        await alive(web);
      },
    );

    await t.step(
      "a 600 MB value: answered within the time limit, small, and served after",
      async () => {
        const t0 = performance.now();
        const res = await postSql(web, "SELECT repeat('x', 600000000)");
        const body = await res.text();
        const at = performance.now() - t0;
        assert.ok([413, 422].includes(res.status), `${res.status}: ${body.slice(0, 300)}`);
        assert.match(body, /first row is over \d+ bytes|ran longer than 3000 ms/);
        assert.ok(body.length < 2000, `${body.length} bytes`);
        assert.ok(at < TIMEOUT_MS + ANSWER_SLACK_MS, `answered after ${Math.round(at)} ms`);
        await alive(web);
      },
    );
  } finally {
    const { code, stderr } = await web.stop();
    assert.doesNotMatch(stderr, /terminate called|PermissionException|Aborted/);
    assert.equal(code, 0, stderr);
  }
  assert.deepEqual(await fileDigests(store.dir), before, "store and projections unchanged");
  assert.deepEqual(await fileDigests(target), {}, "nothing written where attacks aimed");
});
