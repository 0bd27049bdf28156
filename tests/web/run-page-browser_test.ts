/**
 * Every run page of the mixed store (completed, failed, first-step, interrupted, resumed and eval
 * runs: tests/web/fixtures/mixed-store.ts) in Debian's headless chromium: each loads without a
 * server error or a page error, draws the charts it has data for and says what it has not; the
 * trajectory browser's filter form works. Screenshots go to $POLYRL_WEB_SCREENSHOTS
 * when set.
 */
import assert from "node:assert/strict";
import { serveDashboard } from "../../web/server/serve.ts";
import { hasChromium, launchChromium, pageErrors, screenshots } from "./fixtures/chromium.ts";
import { fillMixedStore, MIXED_RUNS } from "./fixtures/mixed-store.ts";

Deno.test({
  name: "browser: every run page of a mixed store loads, draws, and filters trajectories",
  ignore: !hasChromium,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const { path } = await fillMixedStore();
    const shots = screenshots();
    const dashboard = await serveDashboard(path, { port: 0 });
    await using chrome = await launchChromium();
    try {
      const page = await chrome.browser.newPage();
      const errors = pageErrors(page);

      for (const [name, runId] of Object.entries(MIXED_RUNS)) {
        const res = await page.goto(`${dashboard.url}runs/${runId}`);
        assert.equal(res?.status(), 200, runId);
        await page.locator("[data-status]").first().waitFor();
        // Hydrated: every chart with data has its canvas, every empty one its message.
        const drawn = await page.locator("figure.chart:not([data-empty])").count();
        assert.equal(await page.locator("figure.chart:not([data-empty]) canvas").count(), drawn);
        for (const text of await page.locator("figure.chart[data-empty] p").allInnerTexts()) {
          assert.match(text, /^no /, `${runId}: ${text}`);
        }
        await shots.take(page, `run-${name}.png`);
      }

      await page.goto(`${dashboard.url}runs/${MIXED_RUNS.completed}`);
      await page.locator('[data-chart="eval-accuracy"] canvas').waitFor();
      const legend = await page.locator('[data-chart="eval-accuracy"] .u-legend .u-series th')
        .allInnerTexts();
      assert.deepEqual(legend.map((s) => s.trim()).filter((s) => s.startsWith("validation")), [
        "validation avg@2",
        "validation pass@2",
      ]);

      // The filter form: the evaluations of step 0, the correct ones only.
      await page.getByRole("link", { name: "evaluations" }).click();
      await page.locator('.trajectories[data-phase="eval"]').waitFor();
      await page.locator('select[name="step"]').selectOption("0");
      await page.locator('select[name="correct"]').selectOption("yes");
      await page.getByRole("button", { name: "show" }).click();
      await page.waitForURL(/correct=yes/);
      assert.match(page.url(), /phase=eval/);
      const headers = await page.locator(".trajectory h3").allInnerTexts();
      assert.ok(headers.length > 0, "step 0 has correct validation trajectories");
      for (const h of headers) assert.match(h, /✓ correct/);
      await page.locator("#trajectories").scrollIntoViewIfNeeded();
      await shots.take(page, "trajectories-filtered.png");
      assert.deepEqual(errors, []);
    } finally {
      await dashboard.close();
    }
  },
});
