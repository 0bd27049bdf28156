/**
 * End to end in Debian's headless chromium (driven by playwright-core): the runs page lists the
 * runs, the run page draws a gradient-norm chart with one line per worker group and receives new
 * steps while the run is appending, the SQL console returns the right row count from DuckDB-Wasm.
 * Screenshots go to $POLYRL_WEB_SCREENSHOTS when set.
 */
import assert from "node:assert/strict";
import { openStore } from "../../events/mod.ts";
import { serveDashboard } from "../../web/server/serve.ts";
import { dashboardRun, fillDashboardStore, RUNS } from "./fixtures/dashboard-store.ts";
import { fakeRunEvents, writeFakeRun } from "../support/fake-run.ts";
import { hasChromium, launchChromium, pageErrors, screenshots } from "./fixtures/chromium.ts";

Deno.test({
  name: "browser: runs, live run page, compare and SQL console work in chromium",
  ignore: !hasChromium,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const { dir, path } = await fillDashboardStore();
    const shots = screenshots();
    const dashboard = await serveDashboard(path, { port: 0 });
    await using chrome = await launchChromium();
    try {
      const page = await chrome.browser.newPage();
      const errors = pageErrors(page);

      await page.goto(dashboard.url);
      for (const id of Object.keys(RUNS)) await page.getByRole("link", { name: id }).waitFor();
      await page.getByPlaceholder("filter runs").fill("dr-mas");
      assert.equal(await page.locator(".runs-table tbody tr").count(), 2);
      await page.getByPlaceholder("filter runs").fill("");
      await shots.take(page, "runs.png");

      await page.goto(`${dashboard.url}runs/live-s3`);
      const grad = page.locator('[data-chart="grad-wg"] canvas');
      await grad.waitFor();
      const legend = await page.locator('[data-chart="grad-wg"] .u-legend .u-series th')
        .allInnerTexts();
      assert.deepEqual(legend.map((s) => s.trim()).filter((s) => s.startsWith("wg-")).sort(), [
        "wg-critic",
        "wg-solver",
      ]);
      {
        await using store = await openStore(path);
        await writeFakeRun(
          store,
          dashboardRun({ ...RUNS["live-s3"], steps: 5, fromStep: 3, complete: true }),
        );
      }
      await page.locator('[data-status="completed"]').waitFor({ timeout: 20_000 });
      await page.locator('[data-steps="5"]').waitFor();
      const received = Number(
        await page.locator("[data-live-events]").getAttribute("data-live-events"),
      );
      assert.ok(received > 10, `live events received: ${received}`);
      await shots.take(page, "run.png");

      const t0 = performance.now();
      await page.goto(`${dashboard.url}runs/grpo-s1`);
      await page.locator('[data-chart="grad-wg"] canvas').waitFor();
      // The large-run figure (10k steps) is `deno task bench web`; this is the small run's.
      console.log(`run page first render: ${Math.round(performance.now() - t0)} ms`);
      await shots.take(page, "run-spike.png");

      await page.goto(
        `${dashboard.url}compare?runs=grpo-s1,grpo-s2,drmas-s1,drmas-s2&by=estimator&baseline=grpo`,
      );
      await page.locator('[data-chart="curve-0"] canvas').waitFor();
      await shots.take(page, "compare.png");

      await page.goto(`${dashboard.url}sql`);
      await page.locator("textarea").fill(
        "SELECT run_id, count(*) AS n FROM turns GROUP BY run_id ORDER BY run_id",
      );
      await page.locator("#run-browser").click();
      await page.locator(".result, pre.error").first().waitFor({ timeout: 60_000 });
      const failed = await page.locator("pre.error").allInnerTexts();
      assert.deepEqual(failed, [], "SQL console error");
      assert.equal(
        await page.locator(".result").getAttribute("data-rows"),
        String(Object.keys(RUNS).length),
      );
      assert.match(await page.locator(".result").innerText(), /duckdb-wasm/);
      // drmas-s1: 6 steps and 2 evaluations, each 2 prompts x 4 samples x 2 agents: 128 turns.
      const turns = [...fakeRunEvents(dashboardRun(RUNS["drmas-s1"]))].flat()
        .filter((e) => e.type === "turn.generated").length;
      assert.equal(turns, 8 * 2 * 4 * 2);
      const row = new RegExp(`drmas-s1\\s+${turns}`);
      assert.match(await page.locator(".result .scroll tbody").innerText(), row);
      await shots.take(page, "sql.png");
      // The same query on the server: the island posts JSON, which the server requires.
      await page.locator("#run-server").click();
      await page.locator(".result", { hasText: "server projection" }).waitFor({ timeout: 30_000 });
      assert.deepEqual(await page.locator("pre.error").allInnerTexts(), [], "server SQL error");
      assert.match(await page.locator(".result .scroll tbody").innerText(), row);
      assert.deepEqual(errors, []);
    } finally {
      await dashboard.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
