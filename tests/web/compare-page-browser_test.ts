/**
 * The Compare page's filter form in Debian's headless chromium, over the mixed store
 * (tests/web/fixtures/mixed-store.ts): the default shows the completed training runs with the
 * reason its comparison table is empty, the form widens the selection to every run but one, and
 * a hostile predicate comes back as the page's error with the form kept. Screenshots go to
 * $POLYRL_WEB_SCREENSHOTS when set.
 */
import assert from "node:assert/strict";
import { serveDashboard } from "../../web/server/serve.ts";
import { hasChromium, launchChromium, pageErrors, screenshots } from "./fixtures/chromium.ts";
import { fillMixedStore, MIXED_RUNS } from "./fixtures/mixed-store.ts";

Deno.test({
  name: "browser: the compare page's filters select runs, and a hostile predicate is an error",
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
      // The hostile predicate is answered 400 on purpose.
      const errors = pageErrors(page, { expectedStatuses: [400] });
      const shown = async () => (await page.locator("table.groups a.run").allInnerTexts()).sort();

      const home = await page.goto(`${dashboard.url}compare`);
      assert.equal(home?.status(), 200);
      assert.deepEqual(await shown(), [MIXED_RUNS.completed, MIXED_RUNS.resumed].sort());
      assert.match(await page.locator(".empty-reason").first().innerText(), /^only estimator=/);
      await page.locator("figure.chart canvas").first().waitFor();
      await shots.take(page, "compare-default.png");

      // Every run but the dead one, through the form as a user fills it in.
      await page.locator('input[name="status"]').fill("all");
      await page.locator('select[name="kind"]').selectOption("all");
      await page.locator('input[name="where"]').fill(`run_id <> '${MIXED_RUNS.dead}'`);
      await page.getByRole("button", { name: "compare" }).click();
      await page.waitForURL(/kind=all/);
      assert.deepEqual(
        await shown(),
        Object.values(MIXED_RUNS).filter((id) => id !== MIXED_RUNS.dead).sort(),
      );
      const columns = await page.locator("table.accuracy th").allInnerTexts();
      assert.ok(
        columns.includes("sums avg@2") && columns.includes("validation avg@2"),
        columns.join(),
      );
      assert.equal(
        await page.locator('input[name="where"]').inputValue(),
        "run_id <> 'mixed-dead'",
      );
      await page.locator("figure.chart canvas").first().waitFor();
      await shots.take(page, "compare-filtered.png");

      await page.locator('input[name="where"]').fill("1=1) union select 'x' --");
      await page.getByRole("button", { name: "compare" }).click();
      await page.waitForURL(/union/);
      assert.match(
        await page.locator("pre.error").innerText(),
        /^where "1=1\) union select 'x' --"/,
      );
      assert.equal(await page.locator("table.groups").count(), 0);
      await shots.take(page, "compare-hostile.png");
      assert.deepEqual(errors, []);
    } finally {
      await dashboard.close();
    }
  },
});
