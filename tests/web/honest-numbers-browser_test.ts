/**
 * What a user reads off the dashboard is what the log records (issue 34 item 6), in Debian's
 * headless chromium over real `train --preset smoke` runs and the generated dashboard runs: each
 * turn's own reward beside its trajectory's; the load/offload timeline over every step; rollout
 * reward and accuracy each on a chart of its own, both drawn, with a note when they are equal;
 * and the compare page's overlays with a thin line per run beside each group's mean, for reward,
 * evaluation, gradient norms and the Lemma 4.2 multiplier. Screenshots go to
 * $POLYRL_WEB_SCREENSHOTS when set.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { serveDashboard } from "../../web/server/serve.ts";
import { runCli } from "../support/run-cli.ts";
import { hasChromium, launchChromium, pageErrors, screenshots } from "./fixtures/chromium.ts";
import { fillDashboardStore } from "./fixtures/dashboard-store.ts";

/** Each series of a chart's legend (the x column's entry left out): label and colour. */
function legendColours(page: Page, chart: string): Promise<Record<string, string>> {
  return page.locator(`[data-chart="${chart}"] .u-legend .u-series`).evaluateAll((rows) =>
    Object.fromEntries(
      rows.slice(1).flatMap((row) => {
        const marker = row.querySelector(".u-marker");
        const label = row.querySelector(".u-label")?.textContent?.trim();
        return marker && label ? [[label, getComputedStyle(marker).borderTopColor]] : [];
      }),
    )
  );
}

/**
 * Canvas pixels of a chart within a small distance of `rgb` ("rgb(r, g, b)"): opaque ones (a
 * line), or with `faint` those about 0.4 opaque (a run's line: the canvas itself is transparent).
 */
function pixelsOf(page: Page, chart: string, rgb: string, faint = false): Promise<number> {
  return page.locator(`[data-chart="${chart}"] canvas`).evaluate((canvas, [rgb, faint]) => {
    const [r, g, b] = (rgb as string).match(/\d+/g)!.map(Number);
    const c = canvas as HTMLCanvasElement;
    const d = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
    const alpha = (a: number) => faint ? a > 80 && a < 125 : a > 240;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) {
      const near = Math.abs(d[i] - r) + Math.abs(d[i + 1] - g) + Math.abs(d[i + 2] - b) < 40;
      if (near && alpha(d[i + 3])) n++;
    }
    return n;
  }, [rgb, faint] as const);
}

/** The opaque colour of a legend colour: "rgba(31, 119, 180, 0.4)" is "rgb(31, 119, 180)". */
const opaque = (colour: string) => `rgb(${colour.match(/\d+/g)!.slice(0, 3).join(", ")})`;

Deno.test({
  name:
    "browser: turn and trajectory rewards, every step's placement, reward apart from accuracy, " +
    "per-run overlays on compare",
  ignore: !hasChromium,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const { dir, path } = await fillDashboardStore();
    const runs = [
      ["resident"],
      // A format component: the trajectory reward is no longer the accuracy.
      ["weighted", "--set", 'rewards.weights={"accuracy":1,"format":1}'],
    ];
    for (const [runId, ...args] of runs) {
      const trained = await runCli(
        "engine/cli/train.ts",
        ...["--preset", "smoke", "--steps", "5", "--run-id", runId, "--store", path, ...args],
      );
      assert.equal(trained.code, 0, trained.stderr);
    }
    const shots = screenshots();
    const dashboard = await serveDashboard(path, { port: 0 });
    await using chrome = await launchChromium();
    try {
      const page = await chrome.browser.newPage();
      const errors = pageErrors(page);

      // The trajectory whose solver took two turns, rewarded 0 and (an invalid action) -0.1: its
      // reward.assigned is their mean, -0.05, which the page showed on both.
      await page.goto(`${dashboard.url}runs/resident?step=0#trajectories`);
      const trajectory = page.locator('.trajectory[data-trajectory="rollout-s0-p0-k0"]');
      const column = (cell: string) => trajectory.locator(`td[${cell}]`).allInnerTexts();
      assert.deepEqual(await trajectory.locator("tbody td:nth-child(2)").allInnerTexts(), [
        "solver",
        "verifier",
        "solver",
      ]);
      assert.deepEqual(await column("data-turn-reward"), ["0", "-0.1", "-0.1"]);
      assert.deepEqual(await column("data-trajectory-reward"), ["0", "0", "0"]);
      assert.match(await trajectory.locator("h3").innerText(), /· trajectory reward 0$/);
      const headers = await trajectory.locator("th").allInnerTexts();
      assert.deepEqual(headers.slice(7, 9), ["turn reward", "trajectory reward"]);
      await trajectory.scrollIntoViewIfNeeded();
      await shots.take(page, "turn-rewards.png", { fullPage: false });

      // Its timeline: both groups on the device in all 5 steps, loaded in step 0 only.
      const timeline = page.locator("svg.timeline");
      assert.equal(await timeline.locator("rect.on").count(), 10);
      assert.equal(await timeline.locator("rect.moved").count(), 2);
      assert.equal(
        await timeline.locator('rect[data-step="3"][data-wg="verifier"] title').textContent(),
        "step 3 verifier: not moved, on cpu (4950016 bytes) all step (loaded in step 0)",
      );
      assert.deepEqual(await timeline.locator(":scope > text").allTextContents(), [
        "step 0",
        "step 4",
      ]);
      await timeline.scrollIntoViewIfNeeded();
      await shots.take(page, "timeline.png", { fullPage: false });

      // Reward and accuracy: each drawn on its own chart; equal here, which the page says.
      const equalities = [["grpo-s1", true], ["resident", true], ["weighted", false]] as const;
      for (const [runId, equal] of equalities) {
        await page.goto(`${dashboard.url}runs/${runId}`);
        for (const chart of ["reward", "accuracy"]) {
          await page.locator(`[data-chart="${chart}"] canvas`).waitFor();
          const colours = await legendColours(page, chart);
          assert.deepEqual(Object.keys(colours), [chart], runId);
          assert.ok((await pixelsOf(page, chart, colours[chart])) > 10, `${runId}: ${chart}`);
        }
        const note = page.locator('[data-note="reward-is-accuracy"]');
        assert.equal(await note.count(), equal ? 1 : 0, runId);
        if (equal) assert.match(await note.innerText(), /^Rollout reward and accuracy are equal/);
        await shots.take(page, `reward-accuracy-${runId}.png`);
      }

      // Compare: every overlay has each group's mean and each of its runs, thin and in its colour.
      await page.goto(
        `${dashboard.url}compare?runs=grpo-s1,grpo-s2,drmas-s1,drmas-s2&by=estimator&baseline=grpo`,
      );
      const titles = await page.locator("figure.chart figcaption").allInnerTexts();
      assert.deepEqual(titles.map((t) => t.split(" by ")[0]), [
        "Rollout reward",
        "Eval avg@16",
        "Gradient norm per worker group",
        "Gradient norm per agent",
        "Lemma 4.2 multiplier per agent",
      ]);
      const lines: Record<string, string[]> = {
        "curve-0": ["dr-mas", "grpo"],
        "curve-1": ["dr-mas", "grpo"],
        "curve-2": ["dr-mas wg-critic", "dr-mas wg-solver", "grpo wg-critic", "grpo wg-solver"],
        "curve-3": ["dr-mas critic", "dr-mas solver", "grpo critic", "grpo solver"],
        "curve-4": ["dr-mas critic", "dr-mas solver", "grpo critic", "grpo solver"],
      };
      const runsOf = { "dr-mas": ["drmas-s1", "drmas-s2"], grpo: ["grpo-s1", "grpo-s2"] };
      for (const [chart, means] of Object.entries(lines)) {
        await page.locator(`[data-chart="${chart}"] canvas`).waitFor();
        const colours = await legendColours(page, chart);
        const expected = means.flatMap((m) => [
          m,
          ...runsOf[m.split(" ")[0] as keyof typeof runsOf].map((r) => `${m} · ${r}`),
        ]);
        assert.deepEqual(Object.keys(colours), expected, chart);
        for (const mean of means) {
          const members = expected.filter((l) => l.startsWith(`${mean} · `));
          for (const m of members) {
            // The group's colour, faint.
            assert.equal(opaque(colours[m]), colours[mean], `${chart} ${m}`);
            assert.match(colours[m], /^rgba\(\d+, \d+, \d+, 0\.4\)$/, `${chart} ${m}`);
          }
          // Drawn, where the lines part (gradient norms about 1 and Lemma multipliers of 1 lie on
          // one another): the mean, and its runs' faint lines over white.
          if (chart !== "curve-0" && chart !== "curve-1") continue;
          assert.ok((await pixelsOf(page, chart, colours[mean])) > 20, `${chart} ${mean}`);
          assert.ok(
            (await pixelsOf(page, chart, colours[mean], true)) > 20,
            `${chart} ${mean}: its runs' lines`,
          );
        }
      }
      await page.locator('[data-chart="curve-0"]').scrollIntoViewIfNeeded();
      await shots.take(page, "compare-overlays.png");
      assert.deepEqual(errors, []);
    } finally {
      await dashboard.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
