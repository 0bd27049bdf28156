/**
 * `deno task bench web`: first render of the Run page for a large run. Fills a store with one
 * generated run (POLYRL_BENCH_WEB_STEPS steps, default 10,000, and about
 * POLYRL_BENCH_WEB_TURNS turn events, default 1,000,000), projects it, then measures
 * the server's HTML for /runs/ID (in process) and, in headless chromium, navigation to the last
 * chart drawn. The bar: under 2 s.
 */
import process from "node:process";
import { openStore } from "../../events/mod.ts";
import { serveDashboard } from "../../web/server/serve.ts";
import { fakeRunEvents } from "../support/fake-run.ts";
import { dashboardRun, type DashboardRunSpec } from "./fixtures/dashboard-store.ts";
import { launchChromium } from "./fixtures/chromium.ts";

const env = (name: string, fallback: number) => Number(Deno.env.get(name) ?? fallback);

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)} s`;
}

/** The benchmark. */
export async function run(): Promise<void> {
  const steps = env("POLYRL_BENCH_WEB_STEPS", 10_000);
  const turns = env("POLYRL_BENCH_WEB_TURNS", 1_000_000);
  // Two agents per trajectory: rollout turns per step = 2 * prompts * groupSize.
  const groupSize = 4;
  const prompts = Math.max(1, Math.round(turns / steps / 2 / groupSize));
  const spec: DashboardRunSpec = {
    runId: "bench-large",
    seed: 7,
    estimator: "dr-mas",
    steps,
    prompts,
    groupSize,
    evalEvery: 50,
    spikeAt: Math.floor(steps / 2),
    nonFiniteAt: Math.floor(steps / 3),
  };
  const dir = await Deno.makeTempDir({ prefix: "polyrl-bench-web-" });
  try {
    const path = `${dir}/events.sqlite`;
    let t = performance.now();
    let events = 0;
    {
      await using store = await openStore(path);
      for (const batch of fakeRunEvents(dashboardRun(spec), 5000)) {
        await store.append(spec.runId, batch);
        events += batch.length;
      }
    }
    const fillMs = performance.now() - t;
    console.log(
      `run: ${steps} steps, ${
        2 * prompts * groupSize * steps
      } rollout turns, ${events} events in all`,
    );
    console.log(
      `fill store: ${seconds(fillMs)} (${Math.round(events / (fillMs / 1000))} events/s)`,
    );
    t = performance.now();
    await using dashboard = await serveDashboard(path, { port: 0 });
    console.log(
      `server start (projection catch-up + island bundles): ${seconds(performance.now() - t)}`,
    );
    const url = `${dashboard.url}runs/${spec.runId}`;
    for (const label of ["cold", "warm"]) {
      t = performance.now();
      const cpu = process.cpuUsage();
      const html = await (await fetch(url)).text();
      const used = process.cpuUsage(cpu);
      // CPU time is what the request costs on an idle machine; wall time here includes waiting
      // for the cores other processes hold.
      console.log(
        `server HTML of the run page (${label}): ${seconds(performance.now() - t)} wall, ${
          seconds((used.user + used.system) / 1000)
        } CPU, ${Math.round(html.length / 1024)} KiB`,
      );
    }
    await using chrome = await launchChromium();
    const page = await chrome.browser.newPage();
    for (const label of ["first", "second"]) {
      t = performance.now();
      await page.goto(url);
      await page.locator('[data-chart="baseline-sigma"] canvas').waitFor({ timeout: 60_000 });
      await page.locator('[data-chart="grad-wg"] canvas').waitFor();
      const drawn = performance.now() - t;
      const nav = await page.evaluate(() => {
        const n = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
        return { ttfb: n.responseStart, dcl: n.domContentLoadedEventEnd };
      });
      console.log(
        `browser, ${label} load of the run page: every chart drawn after ${seconds(drawn)} ` +
          `(first byte ${seconds(nav.ttfb)}, DOMContentLoaded ${seconds(nav.dcl)}); bar: 2 s`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
