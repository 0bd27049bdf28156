/**
 * The real dashboard (`deno task web`) over a store file that is replaced while it runs: another
 * store renamed over it, or copied over it. Its next answers come from the new store, as the CLI
 * commands' would; the old store's runs are gone from its pages, SQL and table exports.
 */
import assert from "node:assert/strict";
import { openStore } from "../../events/mod.ts";
import { writeFakeRun } from "../support/fake-run.ts";
import { dashboardRun, RUNS } from "../web/fixtures/dashboard-store.ts";
import { type RunningDashboard, startDashboard } from "./web-server.ts";

/** A store holding one run, `runId`: the same shape in both stores, so the same event count. */
async function oneRunStore(path: string, runId: string): Promise<void> {
  await using store = await openStore(path);
  await writeFakeRun(store, dashboardRun({ ...RUNS["grpo-s2"], runId }));
}

/** The run ids the dashboard's SQL endpoint lists. */
async function sqlRunIds(web: RunningDashboard): Promise<string[]> {
  const res = await fetch(`${web.url}/api/sql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ sql: "SELECT run_id FROM runs ORDER BY run_id" }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return (JSON.parse(text) as { rows: string[][] }).rows.map((row) => row[0]);
}

/** The runs table as the SQL console's DuckDB-Wasm loads it. */
async function runsExport(web: RunningDashboard): Promise<string> {
  const res = await fetch(`${web.url}/data/runs.csv`);
  assert.equal(res.status, 200);
  return await res.text();
}

/** The Runs page's HTML. */
async function runsPage(web: RunningDashboard): Promise<string> {
  const res = await fetch(`${web.url}/`);
  assert.equal(res.status, 200);
  return await res.text();
}

for (
  const [how, replace] of [
    ["renamed over it (mv)", (from: string, to: string) => Deno.rename(from, to)],
    ["copied over it (cp)", (from: string, to: string) => Deno.copyFile(from, to)],
  ] as const
) {
  Deno.test(`a store file ${how} while the dashboard runs: it answers from the new store`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "polyrl-store-swap-" });
    try {
      const [a, b] = [`${dir}/events.sqlite`, `${dir}/other.sqlite`];
      await oneRunStore(a, "store-a-run");
      await oneRunStore(b, "store-b-run");
      await using web = await startDashboard(a);
      assert.deepEqual(await sqlRunIds(web), ["store-a-run"]);
      assert.match(await runsPage(web), /store-a-run/);
      assert.match(await runsExport(web), /store-a-run/);

      await replace(b, a);
      assert.deepEqual(await sqlRunIds(web), ["store-b-run"]);
      for (const text of [await runsPage(web), await runsExport(web)]) {
        assert.match(text, /store-b-run/);
        assert.doesNotMatch(text, /store-a-run/);
      }
      const { stderr } = await web.stop();
      assert.doesNotMatch(stderr, /error/i, stderr);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}
