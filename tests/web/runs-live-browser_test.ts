/**
 * The Runs page in Debian's headless chromium follows the store live, without a reload: a run
 * that starts appears, a run that completes changes status, a run whose writer died (its lease
 * names a gone process on this host) turns interrupted without any event, tags set with
 * `deno task runs tag` show as chips that filter, and a run hidden with `runs hide` leaves the
 * table until "show hidden" is ticked. Screenshots go to $POLYRL_WEB_SCREENSHOTS
 * when set.
 */
import assert from "node:assert/strict";
import { openStore } from "../../events/mod.ts";
import { serveDashboard } from "../../web/server/serve.ts";
import { runCli } from "../support/run-cli.ts";
import { hasChromium, launchChromium, pageErrors, screenshots } from "./fixtures/chromium.ts";
import { dashboardRun, fillDashboardStore, RUNS } from "./fixtures/dashboard-store.ts";
import { writeFakeRun } from "../support/fake-run.ts";

/** A pid that no process has now: a child that already exited. */
async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}

Deno.test({
  name: "browser: the runs list updates live: new runs, status changes, tags, hiding",
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
      const row = (id: string) => page.locator(`.runs-table tr[data-run="${id}"]`);
      const statusOf = (id: string) => row(id).locator(".status");

      await page.goto(dashboard.url);
      await row("live-s3").waitFor();
      assert.equal(await statusOf("live-s3").innerText(), "running");
      await shots.take(page, "runs-live-0-initial.png");

      // A new run starts and the running one completes: both show up without a reload.
      {
        await using store = await openStore(path);
        await writeFakeRun(
          store,
          dashboardRun({
            ...RUNS["grpo-s1"],
            runId: "fresh-s9",
            seed: 9,
            steps: 2,
            complete: false,
          }),
        );
        await writeFakeRun(
          store,
          dashboardRun({ ...RUNS["live-s3"], steps: 5, fromStep: 3, complete: true }),
        );
        await store.putLease({
          runId: "fresh-s9",
          host: Deno.hostname(),
          pid: await deadPid(),
          startedAt: Date.now(),
          heartbeatAt: Date.now(),
          endedAt: null,
        });
      }
      await row("fresh-s9").waitFor({ timeout: 20_000 });
      await page.locator('tr[data-run="live-s3"] .status.completed').waitFor({ timeout: 20_000 });
      // Its writer's process is gone: interrupted, though no event says so.
      await page.locator('tr[data-run="fresh-s9"] .status.interrupted').waitFor({
        timeout: 20_000,
      });
      assert.equal(await page.locator(".runs-table tbody tr").count(), 6);

      // Tags and hiding through the CLI, while the page is open.
      const runs = (...args: string[]) => runCli("analysis/cli/runs.ts", ...args, "--store", path);
      assert.equal((await runs("tag", "grpo-s1", "baseline")).code, 0);
      assert.equal((await runs("tag", "drmas-s1", "baseline", "ablation")).code, 0);
      assert.equal((await runs("hide", "grpo-s2")).code, 0);
      await row("grpo-s1").locator("button.tag", { hasText: "baseline" }).waitFor({
        timeout: 20_000,
      });
      await row("grpo-s2").waitFor({ state: "detached", timeout: 20_000 });
      assert.match(await page.locator(".toolbar").innerText(), /show hidden \(1\)/);
      await shots.take(page, "runs-live-1-tagged.png");

      // Clicking a tag keeps only its runs; the select says which.
      await row("drmas-s1").locator("button.tag", { hasText: "ablation" }).click();
      assert.equal(await page.locator('select[name="tag"]').inputValue(), "ablation");
      assert.deepEqual(
        await page.locator(".runs-table tbody tr").evaluateAll((rs) =>
          rs.map((r) => r.getAttribute("data-run"))
        ),
        ["drmas-s1"],
      );
      await page.locator('select[name="tag"]').selectOption("baseline");
      assert.equal(await page.locator(".runs-table tbody tr").count(), 2);
      await shots.take(page, "runs-live-2-tag-filter.png");
      await page.locator('select[name="tag"]').selectOption("");

      // Show hidden: the hidden run is back, marked.
      await page.locator('input[name="show-hidden"]').check();
      await row("grpo-s2").waitFor();
      assert.match(await row("grpo-s2").innerText(), /\(hidden\)/);
      const duration = await row("live-s3").locator("td").last().innerText();
      assert.match(duration, /^\d+(\.\d)? s$|^\d+ m \d\d s$/, `duration cell ${duration}`);
      await shots.take(page, "runs-live-3-show-hidden.png");

      assert.deepEqual(errors, []);
    } finally {
      await dashboard.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
