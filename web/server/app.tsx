/**
 * The dashboard's routes (Hono): server-rendered Preact pages with hydrated islands, the live
 * feed of a run as server-sent events, Parquet exports for DuckDB-Wasm, a read-only SQL endpoint,
 * and fixed static files. Nothing here appends to the store.
 */
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { VNode } from "preact";
import { renderToString } from "preact-render-to-string";
import {
  EXPORTED,
  MalformedSqlError,
  ReportError,
  runReadOnlyQuery,
  UnknownRunError,
  WriteRefusedError,
} from "../../analysis/mod.ts";
import { Layout } from "../components/layout.tsx";
import { toWire } from "../components/wire-json.ts";
import { forPage } from "../components/chart-data.ts";
import { compareRuns } from "../data/compare-data.ts";
import { liveMessage } from "../data/live-updates.ts";
import { recentPlacements, runEvals } from "../data/run-details.ts";
import { runCharts } from "../data/run-charts.ts";
import { listRuns } from "../data/runs-list.ts";
import { trajectoryPage } from "../data/trajectory-page.ts";
import { ComparePage, type CompareQuery } from "../pages/compare-page.tsx";
import { RunPage } from "../pages/run-page.tsx";
import { RunsPage } from "../pages/runs-page.tsx";
import { SqlPage } from "../pages/sql-page.tsx";
import type { DashboardSource } from "./dashboard-source.ts";
import { islandBundles } from "./island-bundles.ts";
import type { ExportFormat, TableExports } from "./table-exports.ts";
import { STATIC_FILES } from "./static-files.ts";

/** Trajectories per page of the browser. */
export const TRAJECTORY_PAGE_SIZE = 8;
/** Steps shown by the load/offload timeline. */
export const TIMELINE_STEPS = 40;

function page(title: string, active: string, body: VNode): string {
  return "<!doctype html>" + renderToString(<Layout title={title} active={active}>{body}</Layout>);
}

const wholeNumber = (text: string | undefined, fallback: number) =>
  text !== undefined && /^\d+$/.test(text) ? Number(text) : fallback;

/**
 * Builds the app over an open source and its Parquet exports.
 *
 * @example
 * ```ts
 * const app = createApp(source, exports);
 * const res = await app.request("/runs/run-1");
 * Deno.serve({ hostname: "127.0.0.1", port: 8000 }, app.fetch);
 * ```
 */
export function createApp(source: DashboardSource, exports: TableExports): Hono {
  const app = new Hono();

  app.get("/", async (c) => {
    const runs = await source.read((a) => listRuns(a.db));
    return c.html(page("Runs", "runs", <RunsPage runs={runs} />));
  });

  app.get("/runs/:id", async (c) => {
    const runId = c.req.param("id");
    const body = await source.read(async (a, position) => {
      const [run] = await listRuns(a.db, runId);
      if (!run) return null;
      const lastStep = Math.max(0, run.steps - 1);
      const step = Math.min(wholeNumber(c.req.query("step"), lastStep), lastStep);
      const at = {
        step,
        page: wholeNumber(c.req.query("page"), 0),
        pageSize: TRAJECTORY_PAGE_SIZE,
      };
      const charts = await runCharts(a.conn, runId);
      // Only a running run's page folds live values into means; a finished one needs no counts.
      const counts = run.status === "running";
      const shown = Object.fromEntries(
        Object.entries(charts).map(([name, chart]) => [name, forPage(chart, { counts })]),
      );
      return (
        <RunPage
          run={run}
          live={{ runId, position, status: run.status, steps: run.steps, charts: shown }}
          evals={await runEvals(a.db, runId)}
          placements={await recentPlacements(a.db, runId, TIMELINE_STEPS)}
          trajectories={run.steps > 0 ? await trajectoryPage(a.db, runId, at, source.store) : null}
        />
      );
    });
    if (!body) return c.html(page("Unknown run", "runs", <NotFound what={`run ${runId}`} />), 404);
    return c.html(page(`Run ${runId}`, "runs", body));
  });

  app.get("/api/runs/:id/charts", async (c) => {
    const runId = c.req.param("id");
    const body = await source.read(async (a, position) => ({
      position,
      charts: await runCharts(a.conn, runId),
    }));
    return c.body(toWire(body), 200, { "content-type": "application/json" });
  });

  // The live feed: the store's own catch-up subscription from the position after the rendered
  // page (or after Last-Event-ID on reconnect), filtered to the run's stream.
  app.get("/runs/:id/events", (c) => {
    const runId = c.req.param("id");
    const from =
      wholeNumber(c.req.header("last-event-id"), wholeNumber(c.req.query("from"), 0) - 1) + 1;
    return streamSSE(c, async (stream) => {
      const stop = new AbortController();
      stream.onAbort(() => stop.abort());
      for await (
        const e of source.store.subscribe({ from: Math.max(1, from), signal: stop.signal })
      ) {
        if (e.stream !== runId) continue;
        const message = liveMessage(e);
        // Turns and other events that change nothing on the page are not sent.
        if (message.updates.length === 0 && message.step === undefined && !message.status) continue;
        await stream.writeSSE({ event: "live", id: String(e.position), data: toWire(message) });
        if (message.status) break;
      }
      stop.abort();
    });
  });

  app.get("/compare", async (c) => {
    const query: CompareQuery = {
      runs: (c.req.query("runs") ?? "").split(",").map((s) => s.trim()).filter(Boolean),
      groupBy: c.req.query("by")?.trim() || "estimator",
      baseline: c.req.query("baseline")?.trim() || undefined,
    };
    const result = await source.read(async (a) => {
      const runs = query.runs.length > 0 ? query.runs : (await listRuns(a.db)).map((r) => r.runId);
      if (runs.length === 0) return { data: null, error: "The store has no runs yet." };
      try {
        return { data: await compareRuns(a.db, runs, query), error: null };
      } catch (err) {
        if (err instanceof UnknownRunError || err instanceof ReportError) {
          return { data: null, error: err.message };
        }
        throw err;
      }
    });
    return c.html(
      page("Compare", "compare", <ComparePage query={query} {...result} />),
      result.error ? 400 : 200,
    );
  });

  app.get("/sql", (c) => c.html(page("SQL", "sql", <SqlPage tables={EXPORTED} />)));

  app.post("/api/sql", async (c) => {
    const body = await c.req.json().catch(() => null) as { sql?: unknown } | null;
    if (typeof body?.sql !== "string") {
      return c.json({ error: 'send JSON {"sql": "SELECT ..."}' }, 400);
    }
    const sql = body.sql;
    try {
      const table = await source.read((a) => runReadOnlyQuery(a.conn, sql));
      return c.body(toWire({ columns: table.columns, rows: table.rows }), 200, {
        "content-type": "application/json",
      });
    } catch (err) {
      if (err instanceof WriteRefusedError || err instanceof MalformedSqlError) {
        return c.json({ error: err.message }, err instanceof WriteRefusedError ? 403 : 400);
      }
      throw err;
    }
  });

  app.get("/data/:file", async (c) => {
    const [, name, format] = c.req.param("file").match(/^([a-z_]+)\.(parquet|csv)$/) ?? [];
    const bytes = name ? await exports.file(name, format as ExportFormat) : null;
    if (!bytes) return c.text("no such export", 404);
    const type = format === "csv" ? "text/csv" : "application/vnd.apache.parquet";
    return c.body(bytes, 200, { "content-type": type });
  });

  app.get("/islands/:file", async (c) => {
    const name = c.req.param("file").match(/^([a-z-]+)\.js$/)?.[1];
    const js = name ? (await islandBundles()).get(name) : undefined;
    if (!js) return c.text("no such island", 404);
    return c.body(js, 200, { "content-type": "text/javascript" });
  });

  app.get("/static/*", async (c) => {
    const file = STATIC_FILES[c.req.path.slice("/static/".length)];
    if (!file) return c.text("no such file", 404);
    return c.body(await Deno.readFile(file.path), 200, { "content-type": file.type });
  });

  app.notFound((c) => c.html(page("Not found", "", <NotFound what={c.req.path} />), 404));
  return app;
}

function NotFound({ what }: { what: string }) {
  return (
    <>
      <h1>Not found</h1>
      <p class="notice">
        There is no {what} here. <a href="/">Back to the runs</a>.
      </p>
    </>
  );
}
