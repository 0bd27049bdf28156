/**
 * What a user reads off the charts, in Debian's headless chromium: one colour per agent across
 * every chart of a page (read from each legend and found drawn on each canvas), a y-axis label
 * on every chart, a dot for a run's only step, smoothing and a log scale chosen per chart set,
 * the SQL console's quick chart with one line per group, and DuckDB's own message for a query
 * that fails in the browser. Screenshots go to $POLYRL_WEB_SCREENSHOTS when set.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { openStore } from "../../events/mod.ts";
import { serveDashboard } from "../../web/server/serve.ts";
import { EXAMPLE_QUERIES } from "../../web/pages/sql-page.tsx";
import { dashboardRun, fillDashboardStore } from "./fixtures/dashboard-store.ts";
import { writeFakeRun } from "../support/fake-run.ts";
import { hasChromium, launchChromium, pageErrors, screenshots } from "./fixtures/chromium.ts";

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

/** Canvas pixels of a chart within a small distance of `rgb` ("rgb(r, g, b)"). */
function pixelsOf(page: Page, chart: string, rgb: string): Promise<number> {
  return page.locator(`[data-chart="${chart}"] canvas`).evaluate((canvas, rgb) => {
    const [r, g, b] = rgb.match(/\d+/g)!.map(Number);
    const c = canvas as HTMLCanvasElement;
    const d = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (Math.abs(d[i] - r) + Math.abs(d[i + 1] - g) + Math.abs(d[i + 2] - b) < 40) n++;
    }
    return n;
  }, rgb);
}

/** The height in canvas pixels of what a chart draws in `rgb` (lowest to highest such pixel). */
function heightOf(page: Page, chart: string, rgb: string): Promise<number> {
  return page.locator(`[data-chart="${chart}"] canvas`).evaluate((canvas, rgb) => {
    const [r, g, b] = rgb.match(/\d+/g)!.map(Number);
    const c = canvas as HTMLCanvasElement;
    const d = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
    let [top, bottom] = [Infinity, -Infinity];
    for (let i = 0; i < d.length; i += 4) {
      if (Math.abs(d[i] - r) + Math.abs(d[i + 1] - g) + Math.abs(d[i + 2] - b) >= 40) continue;
      const y = Math.floor(i / 4 / c.width);
      [top, bottom] = [Math.min(top, y), Math.max(bottom, y)];
    }
    return bottom - top;
  }, rgb);
}

/**
 * Dark pixels in the canvas' left 34 px, where uPlot writes the y axis' label (its tick values
 * take the 50 px beside it).
 */
function yLabelInk(page: Page, chart: string): Promise<number> {
  return page.locator(`[data-chart="${chart}"] canvas`).evaluate((canvas) => {
    const c = canvas as HTMLCanvasElement;
    const scale = c.width / c.getBoundingClientRect().width;
    const d = c.getContext("2d")!.getImageData(0, 0, Math.round(34 * scale), c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] + d[i + 1] + d[i + 2] < 300 && d[i + 3]) n++;
    return n;
  });
}

/** The legend value of `label` with the cursor at `fraction` of the plot's width. */
async function valueAt(page: Page, chart: string, label: string, fraction: number) {
  const over = page.locator(`[data-chart="${chart}"] .u-over`);
  const box = (await over.boundingBox())!;
  await page.mouse.move(box.x + box.width * fraction, box.y + box.height / 2);
  const row = page.locator(`[data-chart="${chart}"] .u-legend .u-series`, { hasText: label })
    .first();
  return Number(await row.locator(".u-value").innerText());
}

/** Moves a chart set's smoothing slider as a user's drag would. */
function setSmoothing(page: Page, weight: number) {
  return page.locator('input[name="smoothing"]').evaluate((el, w) => {
    const input = el as HTMLInputElement;
    input.value = String(w);
    input.dispatchEvent(new Event("input", { bubbles: true }));
  }, weight);
}

const ENGINES = ["browser", "server"] as const;

/**
 * Types `sql` into the console, runs it in the browser or on the server and waits for its own
 * answer (the console counts answers); returns the errors shown ([] when it succeeded).
 */
async function runQuery(page: Page, sql: string, engine: typeof ENGINES[number]) {
  const root = page.locator(".sql-console");
  const before = Number(await root.getAttribute("data-answered"));
  await page.locator("textarea").fill(sql);
  await page.locator(`#run-${engine}`).click();
  await page.locator(`.sql-console[data-answered="${before + 1}"]`).waitFor({ timeout: 60_000 });
  return await page.locator("pre.error").allInnerTexts();
}

const canvasImage = (page: Page, chart: string) =>
  page.locator(`[data-chart="${chart}"] canvas`).evaluate((c) =>
    (c as HTMLCanvasElement).toDataURL()
  );

Deno.test({
  name: "browser charts: page colours, axis labels, dots, smoothing, log, SQL quick chart",
  ignore: !hasChromium,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const { dir, path } = await fillDashboardStore();
    {
      await using store = await openStore(path);
      await writeFakeRun(
        store,
        dashboardRun({
          runId: "one-step",
          seed: 9,
          estimator: "grpo",
          steps: 1,
          prompts: 2,
          groupSize: 4,
          evalEvery: 1,
        }),
      );
    }
    const shots = screenshots();
    const dashboard = await serveDashboard(path, { port: 0 });
    await using chrome = await launchChromium();
    try {
      const page = await chrome.browser.newPage();
      const errors = pageErrors(page);

      // The run page: an agent's colour is the same in every chart that draws it.
      await page.goto(`${dashboard.url}runs/grpo-s1`);
      const charts = [
        "reward",
        "accuracy",
        "grad-wg",
        "grad-agent",
        "lemma",
        "baseline-mu",
        "baseline-sigma",
      ];
      for (const c of charts) await page.locator(`[data-chart="${c}"] canvas`).waitFor();
      const perAgent = ["grad-agent", "lemma", "baseline-mu", "baseline-sigma"];
      const legends = Object.fromEntries(
        await Promise.all(perAgent.map(async (c) => [c, await legendColours(page, c)])),
      );
      const critic = legends["grad-agent"].critic, solver = legends["grad-agent"].solver;
      assert.ok(critic && solver && critic !== solver, `critic ${critic}, solver ${solver}`);
      for (const c of perAgent) {
        assert.equal(legends[c].critic, critic, `${c}: critic`);
        assert.equal(legends[c].solver, solver, `${c}: solver`);
        // drawn in that colour, not only listed in it
        assert.ok((await pixelsOf(page, c, critic)) > 20, `${c}: no critic pixels`);
        assert.ok((await pixelsOf(page, c, solver)) > 20, `${c}: no solver pixels`);
      }
      // Every label of the page, in whichever chart, has one colour of its own (the markers keep
      // theirs); every chart names its y axis.
      const lines: Record<string, string> = {};
      // Charts with nothing to draw (data-empty: the off-policy chart of a run that recorded no
      // diagnostics) say why in place of a canvas and have no axis.
      const all = await page.locator("figure[data-chart]:not([data-empty])").evaluateAll((fs) =>
        fs.map((f) => (f as HTMLElement).dataset.chart!)
      );
      assert.ok(charts.every((c) => all.includes(c)), `charts on the page: ${all}`);
      for (const c of all) {
        for (const [label, colour] of Object.entries(await legendColours(page, c))) {
          if (/ (spike|non-finite)$/.test(label)) continue;
          assert.equal(lines[label] ?? colour, colour, `${label} in ${c}`);
          lines[label] = colour;
        }
        assert.ok((await yLabelInk(page, c)) > 15, `${c}: no y-axis label`);
      }
      const names = Object.keys(lines);
      assert.equal(new Set(Object.values(lines)).size, names.length, JSON.stringify(lines));
      await shots.take(page, "charts-run.png");

      // Smoothing moves the line under the cursor (the 60x spike of wg-solver at step 4), the
      // log scale redraws without changing values, and both apply to every chart of the set.
      const raw = await valueAt(page, "grad-wg", "wg-solver", 0.8);
      const rawMu = await canvasImage(page, "baseline-mu");
      await setSmoothing(page, 0.9);
      await page.locator("output[data-smoothing='0.9']").waitFor();
      const smooth = await valueAt(page, "grad-wg", "wg-solver", 0.8);
      assert.ok(smooth < raw / 2, `smoothed ${smooth} vs raw ${raw}`);
      assert.notEqual(await canvasImage(page, "baseline-mu"), rawMu, "baseline-mu not smoothed");
      const linear = await canvasImage(page, "grad-wg");
      await page.locator('input[name="log-y"]').check();
      await page.waitForFunction(
        (before) =>
          (document.querySelector('[data-chart="grad-wg"] canvas') as HTMLCanvasElement)
            .toDataURL() !== before,
        linear,
      );
      assert.equal(await valueAt(page, "grad-wg", "wg-solver", 0.8), smooth);
      // The palette is kept when the view changes.
      assert.equal((await legendColours(page, "lemma")).critic, critic);
      await page.mouse.move(0, 0);
      await shots.take(page, "charts-run-smoothed-log.png");

      // A run of one step: every line is a dot.
      await page.goto(`${dashboard.url}runs/one-step`);
      for (const c of ["reward", "accuracy", "grad-wg", "grad-agent", "lemma"]) {
        await page.locator(`[data-chart="${c}"] canvas`).waitFor();
        const colours = await legendColours(page, c);
        assert.ok(Object.keys(colours).length > 0, `${c}: ${Object.keys(colours)}`);
        for (const [label, colour] of Object.entries(colours)) {
          assert.ok(
            (await pixelsOf(page, c, colour)) > 10,
            `${c} ${label}: its one point is missing`,
          );
        }
      }
      await shots.take(page, "charts-one-step.png");

      // Compare: a group (and each of its runs) has one colour in both overlaid charts.
      await page.goto(
        `${dashboard.url}compare?runs=grpo-s1,grpo-s2,drmas-s1,drmas-s2&by=estimator&baseline=grpo`,
      );
      await page.locator('[data-chart="curve-1"] canvas').waitFor();
      const [rewardCurves, evalCurves] = [
        await legendColours(page, "curve-0"),
        await legendColours(page, "curve-1"),
      ];
      assert.deepEqual(Object.keys(rewardCurves).filter((l) => !l.includes(" · ")), [
        "dr-mas",
        "grpo",
      ]);
      assert.deepEqual(evalCurves, rewardCurves);
      assert.notEqual(rewardCurves.grpo, rewardCurves["dr-mas"]);
      await shots.take(page, "charts-compare.png");

      // SQL: one line per agent, in the browser and on the server.
      await page.goto(`${dashboard.url}sql`);
      const grouped =
        "SELECT step, agent, avg(response_tokens) AS tokens FROM turns\nWHERE run_id = 'grpo-s1' GROUP BY step, agent ORDER BY step, agent";
      for (const engine of ENGINES) {
        assert.deepEqual(await runQuery(page, grouped, engine), [], engine);
        await page.locator('[data-chart="sql"] canvas').waitFor();
        const sql = await legendColours(page, "sql");
        assert.deepEqual(Object.keys(sql), ["critic", "solver"], engine);
        for (const colour of Object.values(sql)) {
          assert.ok((await pixelsOf(page, "sql", colour)) > 20, `${engine}: a line is missing`);
        }
        assert.ok((await yLabelInk(page, "sql")) > 15, `${engine}: no y-axis label`);
      }
      await shots.take(page, "charts-sql-grouped.png");

      // Values a log axis cannot show, and NaN: not drawn, and no error (checked at the end).
      assert.deepEqual(
        await runQuery(
          page,
          "SELECT step, 0.0 AS zero, -1.0 AS below, 'nan'::DOUBLE AS nan FROM turns\nGROUP BY step ORDER BY step",
          "browser",
        ),
        [],
      );
      assert.deepEqual(Object.keys(await legendColours(page, "sql")), ["below", "zero"]);
      await page.locator('input[name="log-y"]').check();
      await page.locator('input[name="log-y"]:checked').waitFor();
      await page.locator('[data-chart="sql"] canvas').waitFor();

      // The browser answers every type as the server does (decimals as numbers, not as their
      // unscaled digits; timestamps as ISO text, not as milliseconds).
      const typed =
        "SELECT 1 AS one, -1.25 AS dec, 123.456::DECIMAL(38,3) AS wide, 2::HUGEINT AS huge,\n" +
        "  TIMESTAMP '2024-01-02 03:04:05' AS ts, DATE '2024-01-02' AS d, [1, 2] AS l, 'x' AS t";
      const answers: string[] = [];
      for (const engine of ENGINES) {
        assert.deepEqual(await runQuery(page, typed, engine), [], engine);
        answers.push(await page.locator(".result .scroll tbody").innerText());
      }
      assert.equal(answers[0], answers[1]);
      assert.match(answers[0], /^1\t-1\.25\t123\.456\t2\t2024-01-02T03:04:05\.000Z\t/);

      // Every example the page offers runs in the browser; the per-worker-group one draws a line
      // per worker group.
      for (const example of EXAMPLE_QUERIES) {
        assert.deepEqual(await runQuery(page, example.sql, "browser"), [], example.title);
        if (example.title.includes("one line per worker group")) {
          const wgs = await legendColours(page, "sql");
          assert.deepEqual(Object.keys(wgs), ["wg-critic", "wg-solver"]);
        }
      }
      // The last example draws bars: on a log axis too, without an error.
      assert.ok(EXAMPLE_QUERIES.at(-1)!.sql.startsWith("SELECT agent,"));
      await page.locator('[data-chart="sql"] canvas').waitFor();
      await page.locator('input[name="log-y"]').check();
      await page.locator('input[name="log-y"]:checked').waitFor();
      // Both bars of an agent are in sight, the short one (tokens) beside the tall (turns).
      const barColours = await legendColours(page, "sql");
      assert.deepEqual(Object.keys(barColours), ["tokens", "turns"]);
      for (const [label, colour] of Object.entries(barColours)) {
        assert.ok((await heightOf(page, "sql", colour)) > 8, `bars of ${label} flat or hidden`);
      }
      await shots.take(page, "charts-sql-bars-log.png");
      // Picking an example puts it in the editor.
      await page.getByLabel("example queries").selectOption({ label: EXAMPLE_QUERIES[1].title });
      assert.equal(await page.locator("textarea").inputValue(), EXAMPLE_QUERIES[1].sql);

      // A failing query shows DuckDB's message, and the database works on afterwards.
      const failures: [string, RegExp][] = [
        [
          "SELECT * FROM no_such_table",
          /Catalog Error: Table with name no_such_table does not exist/,
        ],
        ["SELEC step FROM turns", /Parser Error: syntax error at or near "SELEC"/],
        ["SELECT step + 'x' FROM turns", /Conversion Error|Binder Error/],
      ];
      for (const [sql, message] of failures) {
        const [error] = await runQuery(page, sql, "browser");
        assert.match(error ?? "no error shown", message, sql);
        assert.doesNotMatch(error, /_setThrew/, sql);
        if (sql === failures[0][0]) {
          await shots.take(page, "charts-sql-error.png");
        }
      }
      assert.deepEqual(
        await runQuery(
          page,
          "SELECT count(*) AS n FROM turns WHERE run_id = 'drmas-s1' AND phase = 'rollout'",
          "browser",
        ),
        [],
      );
      // 6 steps x 2 prompts x 4 samples x 2 agents.
      assert.match(await page.locator(".result .scroll tbody").innerText(), /^96$/m);
      assert.deepEqual(errors, []);
    } finally {
      await dashboard.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
