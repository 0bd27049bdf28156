/**
 * The Runs page over the real dashboard (`app.request`): the mixed store's every kind of run is
 * one row, with its status (a SIGKILLed run interrupted, a resumed one completed in two
 * attempts), duration, tags and hidden flag; `/api/runs`, which the table polls, answers the
 * same as JSON; an empty store renders the table's empty state.
 */
import assert from "node:assert/strict";
import { openStore } from "../../events/mod.ts";
import { fromWire } from "../../web/components/wire-json.ts";
import type { RunsSnapshot } from "../../web/islands/runs-table.tsx";
import { runCli } from "../support/run-cli.ts";
import { dashboardAppOver } from "./fixtures/dashboard-store.ts";
import { fillMixedStore, MIXED_FAILURE, MIXED_RUNS } from "./fixtures/mixed-store.ts";

/** A copy of the mixed store that a test may append to (the shared one must stay as made). */
async function mixedCopy(): Promise<{ dir: string; path: string }> {
  const mixed = await fillMixedStore();
  const dir = await Deno.makeTempDir({ prefix: "polyrl-runs-page-" });
  for (const suffix of ["", "-wal"]) {
    await Deno.copyFile(`${mixed.path}${suffix}`, `${dir}/events.sqlite${suffix}`).catch(
      (err) => {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      },
    );
  }
  return { dir, path: `${dir}/events.sqlite` };
}

Deno.test({
  name: "runs page: every kind of run once, interrupted and resumed runs as such, tags, hiding",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { dir, path } = await mixedCopy();
    const runs = (...args: string[]) => runCli("analysis/cli/runs.ts", ...args, "--store", path);
    assert.equal((await runs("tag", MIXED_RUNS.completed, "baseline", "paper-1")).code, 0);
    assert.equal((await runs("hide", MIXED_RUNS.failed)).code, 0);
    await using dash = await dashboardAppOver(path, () => Deno.remove(dir, { recursive: true }));

    const api = await dash.app.request("/api/runs");
    assert.equal(api.status, 200);
    const snapshot = fromWire<RunsSnapshot>(await api.text());
    const byId = new Map(snapshot.runs.map((r) => [r.runId, r]));
    assert.equal(snapshot.runs.length, Object.keys(MIXED_RUNS).length, "one row per run");
    const status = Object.fromEntries(
      Object.entries(MIXED_RUNS).map(([k, id]) => [k, byId.get(id)?.status]),
    );
    assert.deepEqual(status, {
      completed: "completed",
      eval: "completed",
      resumed: "completed",
      dead: "interrupted",
      failed: "failed",
      // Written by a test fixture, not a trainer: no lease, so nothing says it died.
      firstStep: "running",
    });
    // Finished steps of the steps asked for (null where a synthetic config names none): a step
    // under way is not done, so a run killed in step s has s done; a failed one, those before
    // the step run.failed names.
    const steps = (id: string) => [byId.get(id)!.stepsDone, byId.get(id)!.steps];
    assert.deepEqual(steps(MIXED_RUNS.completed), [2, 2]);
    assert.deepEqual(steps(MIXED_RUNS.resumed), [8, 8]);
    assert.deepEqual(steps(MIXED_RUNS.failed), [MIXED_FAILURE.step, null]);
    assert.deepEqual(steps(MIXED_RUNS.firstStep), [0, null]);
    const dead = byId.get(MIXED_RUNS.dead)!;
    assert.deepEqual([dead.stepsDone, dead.steps], [dead.lastStep, 1000]);
    assert.equal(byId.get(MIXED_RUNS.resumed)!.attempts, 2);
    assert.equal(byId.get(MIXED_RUNS.completed)!.attempts, 1);
    assert.deepEqual(byId.get(MIXED_RUNS.completed)!.tags, ["baseline", "paper-1"]);
    assert.equal(byId.get(MIXED_RUNS.failed)!.hidden, true);
    for (const r of snapshot.runs) {
      assert.ok(r.durationS !== null && r.durationS >= 0, `${r.runId} duration ${r.durationS}`);
    }
    assert.ok(snapshot.position > 0);

    const page = await dash.app.request("/");
    assert.equal(page.status, 200);
    const html = await page.text();
    // The server renders the table as the island will: hidden rows left out until asked for.
    for (const id of Object.values(MIXED_RUNS)) {
      const times = id === MIXED_RUNS.failed ? 0 : 1;
      assert.equal(html.split(`data-run="${id}"`).length - 1, times, `${id} listed ${times}x`);
    }
    assert.match(html, /show hidden \(1\)/);
    assert.match(html, /<span class="status interrupted">interrupted<\/span>/);
    assert.match(html, /title="attempts: the first and each resume">×2</);
    assert.match(html, /class="tag"[^>]*>baseline<\/button>/);
    assert.match(html, /<th class="sortable">duration<\/th>/);
    assert.match(html, /<td class="num" data-steps-done="2">2 of 2<\/td>/);
  },
});

Deno.test({
  name: "runs page: an empty store renders the table's empty state, and /api/runs says []",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "polyrl-runs-page-" });
    const path = `${dir}/events.sqlite`;
    await (await openStore(path)).close();
    await using dash = await dashboardAppOver(path, () => Deno.remove(dir, { recursive: true }));
    const page = await dash.app.request("/");
    assert.equal(page.status, 200);
    assert.match(await page.text(), /The store has no runs yet/);
    const api = fromWire<RunsSnapshot>(await (await dash.app.request("/api/runs")).text());
    assert.deepEqual(api, { position: 0, runs: [] });
    // A foreign Host is refused here as everywhere (DNS rebinding).
    const foreign = await dash.app.request("/api/runs", { headers: { host: "evil.example" } });
    assert.equal(foreign.status, 421);
  },
});
