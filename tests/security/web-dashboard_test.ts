/**
 * Attacks on the real dashboard (`deno task web` on 127.0.0.1, an ephemeral port): SQL that
 * would write, cross-site and rebinding requests, oversized bodies, a query that would run for
 * minutes, and bad parameters. Each is refused with its status and message, the dashboard keeps
 * serving its own pages, and the store and the projections are byte-identical afterwards.
 */
import assert from "node:assert/strict";
import { fakeRunEvents } from "../support/fake-run.ts";
import { dashboardRun, RUNS } from "../web/fixtures/dashboard-store.ts";
import { attackedStore, fileDigests } from "./sql-files.ts";
import { rawRequest, type RunningDashboard, startDashboard } from "./web-server.ts";

const JSON_TYPE = { "content-type": "application/json" };
const TIMEOUT_MS = 3000;

function postSql(web: RunningDashboard, sql: string, headers: Record<string, string> = JSON_TYPE) {
  return fetch(`${web.url}/api/sql`, { method: "POST", headers, body: JSON.stringify({ sql }) });
}

async function expectStatus(res: Response | Promise<Response>, status: number, body: RegExp) {
  const r = await res;
  const text = await r.text();
  assert.equal(r.status, status, text.slice(0, 300));
  assert.match(text, body);
  return text;
}

Deno.test("dashboard attacks are refused and leave the store and projections byte-identical", async (t) => {
  await using store = await attackedStore();
  {
    // The first start projects the store; the attacks run on a second one.
    await using warm = await startDashboard(store.path);
    await expectStatus(fetch(`${warm.url}/`), 200, /grpo-s1/);
    // Every turn the dashboard store's fake runs wrote.
    const turns = Object.values(RUNS).flatMap((spec) => [...fakeRunEvents(dashboardRun(spec))])
      .flat().filter((e) => e.type === "turn.generated").length;
    await expectStatus(
      postSql(warm, "SELECT count(*) FROM turns"),
      200,
      new RegExp(`\\b${turns}\\b`),
    );
  }
  const before = await fileDigests(store.dir);
  assert.ok(
    Object.keys(before).some((f) => /\.analysis\/\d+\.duckdb$/.test(f)),
    "projections exist",
  );

  const web = await startDashboard(store.path, [
    "--query-timeout-ms",
    String(TIMEOUT_MS),
    "--allow-host",
    "lab.example",
  ]);
  try {
    await t.step("EXPLAIN ANALYZE of a write, COPY, SET and RESET: 403, nothing runs", async () => {
      for (
        const sql of [
          "EXPLAIN ANALYZE UPDATE evals SET c = n",
          "EXPLAIN ANALYZE DELETE FROM steps",
          "EXPLAIN ANALYZE CREATE TABLE pwn AS SELECT 1",
          `EXPLAIN ANALYZE COPY (SELECT * FROM runs) TO '${store.target}/x.csv'`,
          `COPY (SELECT * FROM runs) TO '${store.target}/y.csv'`,
          `EXPORT DATABASE '${store.target}/export'`,
          `ATTACH '${store.target}/new.duckdb'`,
          "SET enable_external_access = true",
          "EXPLAIN ANALYZE SET enable_external_access = true",
          "RESET lock_configuration",
          "INSTALL httpfs",
        ]
      ) {
        await expectStatus(
          postSql(web, sql),
          403,
          /statements are not allowed; DuckDB does not read this as a SELECT/,
        );
      }
      await expectStatus(
        postSql(web, "SELECT 1; UPDATE evals SET c = n"),
        400,
        /expected exactly one statement, got 2/,
      );
      await expectStatus(postSql(web, "SELECT 1\0; UPDATE evals SET c = n"), 400, /NUL character/);
      await expectStatus(postSql(web, "SELECT count(*) FROM evals WHERE c = n"), 200, /\[\[0\]\]/);
    });

    await t.step("user SQL runs sealed: read-only, no files, configuration locked", async () => {
      await expectStatus(
        postSql(
          web,
          "SELECT current_setting('access_mode'), current_setting('enable_external_access'), " +
            "current_setting('lock_configuration')",
        ),
        200,
        /\[\["read_only",false,true\]\]/,
      );
      await expectStatus(
        postSql(web, "SELECT * FROM read_csv('/etc/passwd')"),
        400,
        /file system operations are disabled/,
      );
    });

    await t.step("cross-origin requests: 403", async () => {
      for (const origin of ["http://evil.example", "null", "http://127.0.0.1:1"]) {
        await expectStatus(
          postSql(web, "SELECT 1", { ...JSON_TYPE, origin }),
          403,
          /403 forbidden: a request from origin/,
        );
      }
      await expectStatus(
        fetch(`${web.url}/`, { headers: { origin: "http://evil.example" } }),
        403,
        /forbidden/,
      );
      // The dashboard's own origin is served.
      await expectStatus(postSql(web, "SELECT 1", { ...JSON_TYPE, origin: web.url }), 200, /1/);
    });

    await t.step("POSTs that are not JSON (what a cross-site form can send): 415", async () => {
      for (
        const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]
      ) {
        await expectStatus(
          postSql(web, "SELECT 1", { "content-type": type }),
          415,
          /415 unsupported media type.*application\/json/,
        );
      }
      const untyped = await fetch(`${web.url}/api/sql`, {
        method: "POST",
        body: new TextEncoder().encode(JSON.stringify({ sql: "SELECT 1" })),
      });
      await expectStatus(untyped, 415, /unsupported media type \(none\)/);
      await expectStatus(
        postSql(web, "SELECT 41 + 1", { "content-type": "application/json; charset=utf-8" }),
        200,
        /42/,
      );
    });

    await t.step("DNS rebinding: a Host that is not the dashboard's gets 421", async () => {
      for (const host of ["evil.example", `evil.example:${web.port}`, "localhost:1"]) {
        const r = await rawRequest(
          web.port,
          "POST /api/sql HTTP/1.1",
          { host, ...JSON_TYPE },
          '{"sql":"SELECT 1"}',
        );
        assert.equal(r.status, 421, host);
        assert.match(r.body, /does not answer to Host/);
        assert.match(r.body, /--allow-host/);
      }
      const page = await rawRequest(web.port, "GET / HTTP/1.1", { host: "rebound.example" });
      assert.equal(page.status, 421);
      assert.doesNotMatch(page.body, /grpo-s1/);
      for (
        const host of [
          `127.0.0.1:${web.port}`,
          `localhost:${web.port}`,
          `[::1]:${web.port}`,
          "lab.example",
          "LAB.example:8443",
        ]
      ) {
        const r = await rawRequest(web.port, "GET / HTTP/1.1", { host });
        assert.equal(r.status, 200, host);
      }
    });

    await t.step("bodies over 64 KiB: 413, with or without a length", async () => {
      const big = JSON.stringify({ sql: `SELECT 1 -- ${"x".repeat(50 * 1024 * 1024)}` });
      await expectStatus(
        fetch(`${web.url}/api/sql`, { method: "POST", headers: JSON_TYPE, body: big }),
        413,
        /413 request body over 65536 bytes/,
      );
      const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent++ < 800) c.enqueue(chunk);
          else c.close();
        },
      });
      await expectStatus(
        fetch(`${web.url}/api/sql`, { method: "POST", headers: JSON_TYPE, body: stream }),
        413,
        /413/,
      );
      const justUnder = JSON.stringify({ sql: `SELECT 7 -- ${"x".repeat(60 * 1024)}` });
      await expectStatus(
        fetch(`${web.url}/api/sql`, { method: "POST", headers: JSON_TYPE, body: justUnder }),
        200,
        /7/,
      );
    });

    await t.step(
      "a query running past the limit is interrupted; other requests are served meanwhile",
      async () => {
        const t0 = performance.now();
        const heavy = postSql(web, "SELECT count(*) FROM range(1000000000000)").then(async (r) => ({
          status: r.status,
          body: await r.text(),
          at: performance.now() - t0,
        }));
        await new Promise((r) => setTimeout(r, 300));
        await expectStatus(fetch(`${web.url}/`), 200, /grpo-s1/);
        const pageAt = performance.now() - t0;
        await expectStatus(postSql(web, "SELECT count(*) FROM runs"), 200, /\[\[5\]\]/);
        const otherAt = performance.now() - t0;
        const h = await heavy;
        assert.equal(h.status, 422, h.body);
        assert.match(h.body, new RegExp(`longer than ${TIMEOUT_MS} ms and was interrupted`));
        assert.ok(
          pageAt < h.at && otherAt < h.at,
          `page ${pageAt} ms, sql ${otherAt} ms, heavy ${h.at} ms`,
        );
        assert.ok(h.at < TIMEOUT_MS + 5000, `interrupted at ${h.at} ms`);
      },
    );

    await t.step("bad parameters: 400; prototype names: 404", async () => {
      for (
        const path of [
          "/runs/grpo-s1?page=99999999999999999999",
          "/runs/grpo-s1?page=-1",
          "/runs/grpo-s1?page=1.5",
          "/runs/grpo-s1?page=abc",
          "/runs/grpo-s1?step=99999999999999999999",
          "/runs/grpo-s1?step=1e3",
          "/runs/live-s3/events?from=99999999999999999999",
        ]
      ) await expectStatus(fetch(`${web.url}${path}`), 400, /bad parameter/);
      await expectStatus(
        fetch(`${web.url}/runs/live-s3/events`, { headers: { "last-event-id": "-5" } }),
        400,
        /bad parameter Last-Event-ID/,
      );
      for (
        const path of [
          "/static/constructor",
          "/static/__proto__",
          "/static/toString",
          "/static/hasOwnProperty",
          "/data/constructor.csv",
          "/islands/constructor.js",
        ]
      ) await expectStatus(fetch(`${web.url}${path}`), 404, /no such/);
      for (const id of ["constructor", "__proto__", "nope"]) {
        await expectStatus(fetch(`${web.url}/api/runs/${id}/charts`), 404, /no run/);
        await expectStatus(fetch(`${web.url}/runs/${id}`), 404, /Not found/);
      }
      // A page past the last is empty, not an error.
      await expectStatus(fetch(`${web.url}/runs/grpo-s1?page=1000`), 200, /Run grpo-s1/);
    });

    await t.step("the dashboard's own pages keep working; its SQL console posts JSON", async () => {
      await expectStatus(fetch(`${web.url}/runs/grpo-s1?step=2&page=0`), 200, /s2-p0-k0/);
      await expectStatus(fetch(`${web.url}/sql`), 200, /data-island="sql-console"/);
      await expectStatus(fetch(`${web.url}/data/runs.csv`), 200, /run_id/);
      const island = await expectStatus(
        fetch(`${web.url}/islands/sql-console.js`),
        200,
        /\/api\/sql/,
      );
      assert.match(island, /"content-type":"application\/json"/);
    });
  } finally {
    const { code, stderr } = await web.stop();
    assert.equal(code, 0, stderr);
  }
  assert.deepEqual(await fileDigests(store.dir), before, "store and projections unchanged");
  assert.deepEqual(await fileDigests(store.target), {}, "nothing written where attacks aimed");
});
