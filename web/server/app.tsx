/**
 * The dashboard's routes (Hono): server-rendered Preact pages with hydrated islands, the live
 * feed of a run as server-sent events, Parquet exports for DuckDB-Wasm, a read-only SQL endpoint,
 * and fixed static files. Nothing here appends to the store. Every request passes the guards
 * first: its Host must be the dashboard's (421), its Origin, if any, too (403), a POST must be
 * JSON (415) and no body may exceed REQUEST_BODY_LIMIT (413).
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { streamSSE } from "hono/streaming";
import type { VNode } from "preact";
import { renderToString } from "preact-render-to-string";
import {
  EXPORTED,
  MalformedSqlError,
  QueryTimeoutError,
  ReportError,
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
import { type AllowedHosts, hostGuard } from "./allowed-hosts.ts";
import type { DashboardSource } from "./dashboard-source.ts";
import { islandBundles } from "./island-bundles.ts";
import { BadParameterError, wholeNumberParam } from "./query-params.ts";
import { sameOriginOnly } from "./same-origin.ts";
import type { ExportFormat, TableExports } from "./table-exports.ts";
import { STATIC_FILES } from "./static-files.ts";
import type { UserSql } from "./user-sql.ts";

/** Trajectories per page of the browser. */
export const TRAJECTORY_PAGE_SIZE = 8;
/** Steps shown by the load/offload timeline. */
export const TIMELINE_STEPS = 40;
/** The largest request body taken (the SQL endpoint's JSON): 64 KiB. */
export const REQUEST_BODY_LIMIT = 64 * 1024;

function page(title: string, active: string, body: VNode): string {
  return "<!doctype html>" + renderToString(<Layout title={title} active={active}>{body}</Layout>);
}

/** What the app serves: the source and its exports, the SQL runner, and the Host names it answers. */
export interface DashboardParts {
  readonly source: DashboardSource;
  readonly exports: TableExports;
  readonly sql: UserSql;
  /** read per request, so a server can fill it in once it knows its port */
  readonly hosts: () => AllowedHosts;
}

/**
 * Builds the app over an open source, its Parquet exports and its SQL runner.
 *
 * @example
 * ```ts
 * const app = createApp({ source, exports, sql, hosts: () => hosts });
 * const res = await app.request("/runs/run-1");
 * Deno.serve({ hostname: "127.0.0.1", port: 8000 }, app.fetch);
 * ```
 */
export function createApp({ source, exports, sql, hosts }: DashboardParts): Hono {
  const app = new Hono();
  app.use(hostGuard(hosts), sameOriginOnly());
  app.use(bodyLimit({
    maxSize: REQUEST_BODY_LIMIT,
    onError: (c) =>
      c.json({
        error: `413 request body over ${REQUEST_BODY_LIMIT} bytes: the SQL endpoint takes ` +
          `{"sql": "SELECT ..."} up to 64 KiB; for longer work use deno task sql`,
      }, 413),
  }));
  app.onError((err, c) => {
    if (err instanceof BadParameterError) {
      if (c.req.path.startsWith("/api/")) return c.json({ error: err.message }, 400);
      return c.html(page("Bad request", "", <BadRequest message={err.message} />), 400);
    }
    console.error(err);
    return c.text("Internal Server Error", 500);
  });

  app.get("/", async (c) => {
    const runs = await source.read((a) => listRuns(a.db));
    return c.html(page("Runs", "runs", <RunsPage runs={runs} />));
  });

  app.get("/runs/:id", async (c) => {
    const runId = c.req.param("id");
    const askedStep = wholeNumberParam("step", c.req.query("step"));
    const askedPage = wholeNumberParam("page", c.req.query("page"));
    const body = await source.read(async (a, position) => {
      const [run] = await listRuns(a.db, runId);
      if (!run) return null;
      const lastStep = Math.max(0, run.steps - 1);
      const step = Math.min(askedStep ?? lastStep, lastStep);
      const at = { step, page: askedPage ?? 0, pageSize: TRAJECTORY_PAGE_SIZE };
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
    const body = await source.read(async (a, position) => {
      const [run] = await listRuns(a.db, runId);
      return run ? { position, charts: await runCharts(a.conn, runId) } : null;
    });
    if (!body) return c.json({ error: `no run ${runId} in this store` }, 404);
    return c.body(toWire(body), 200, { "content-type": "application/json" });
  });

  // The live feed: the store's own catch-up subscription from the position after the rendered
  // page (or after Last-Event-ID on reconnect), filtered to the run's stream.
  app.get("/runs/:id/events", (c) => {
    const runId = c.req.param("id");
    const resumed = wholeNumberParam("Last-Event-ID", c.req.header("last-event-id"));
    const from = resumed === undefined
      ? wholeNumberParam("from", c.req.query("from")) ?? 0
      : resumed + 1;
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
    try {
      const { columns, rows, truncated } = await sql.query(body.sql);
      return c.body(toWire({ columns, rows, truncated }), 200, {
        "content-type": "application/json",
      });
    } catch (err) {
      if (err instanceof WriteRefusedError) return c.json({ error: err.message }, 403);
      if (err instanceof MalformedSqlError) return c.json({ error: err.message }, 400);
      if (err instanceof QueryTimeoutError) return c.json({ error: err.message }, 422);
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
    const file = STATIC_FILES.get(c.req.path.slice("/static/".length));
    if (!file) return c.text("no such file", 404);
    return c.body(await Deno.readFile(file.path), 200, { "content-type": file.type });
  });

  app.notFound((c) => c.html(page("Not found", "", <NotFound what={c.req.path} />), 404));
  return app;
}

function BadRequest({ message }: { message: string }) {
  return (
    <>
      <h1>Bad request</h1>
      <p class="notice">
        {message}. <a href="/">Back to the runs</a>.
      </p>
    </>
  );
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
