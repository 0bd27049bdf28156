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
  ResultTooLargeError,
  WriteRefusedError,
} from "../../analysis/mod.ts";
import { IslandsUnavailable } from "../components/island.tsx";
import { Layout } from "../components/layout.tsx";
import { toWire } from "../components/wire-json.ts";
import { forPage } from "../components/chart-data.ts";
import { type CompareQuery, compareSelection } from "../data/compare-data.ts";
import { liveMessage } from "../data/live-updates.ts";
import { recentPlacements, runEvals, runFacts } from "../data/run-details.ts";
import { runCharts } from "../data/run-charts.ts";
import { listRuns } from "../data/runs-list.ts";
import {
  TRAJECTORY_PHASES,
  type TrajectoryFilter,
  trajectoryPage,
  UnknownAgentError,
} from "../data/trajectory-page.ts";
import { ComparePage } from "../pages/compare-page.tsx";
import { RunPage } from "../pages/run-page.tsx";
import { RunsPage } from "../pages/runs-page.tsx";
import { SqlPage } from "../pages/sql-page.tsx";
import { type AllowedHosts, hostGuard, sameOriginOnly } from "../../events/http/mod.ts";
import type { DashboardSource } from "./dashboard-source.ts";
import { IslandBuildError, islandBundles, ISLANDS, islandsUnavailable } from "./island-bundles.ts";
import { BadParameterError, choiceParam, numberParam, wholeNumberParam } from "./query-params.ts";
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
  const unavailable = islandsUnavailable();
  // The page says its islands are unavailable and starts the next build, so a reload may have them.
  if (unavailable) islandBundles().catch(() => {});
  return "<!doctype html>" + renderToString(
    <IslandsUnavailable.Provider value={unavailable?.message ?? null}>
      <Layout title={title} active={active}>{body}</Layout>
    </IslandsUnavailable.Provider>,
  );
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
 * import { allowedHosts } from "../../events/http/mod.ts";
 * import { openDashboardSource } from "./dashboard-source.ts";
 * import { tableExports } from "./table-exports.ts";
 * import { openUserSql, USER_SQL_LIMITS } from "./user-sql.ts";
 * const source = await openDashboardSource(".polyrl/events.sqlite");
 * const exports = await tableExports(source);
 * const sql = await openUserSql(source, USER_SQL_LIMITS);
 * const hosts = allowedHosts({ hostname: "127.0.0.1", port: 8000 });
 * const app = createApp({ source, exports, sql, hosts: () => hosts });
 * const res = await app.request("/runs/run-1");
 * Deno.serve({ hostname: "127.0.0.1", port: 8000 }, app.fetch);
 * ```
 */
export function createApp({ source, exports, sql, hosts }: DashboardParts): Hono {
  const app = new Hono();
  app.use(
    hostGuard(hosts, { server: "this dashboard", command: "deno task web" }),
    sameOriginOnly({ server: "this dashboard", body: '{"sql": "SELECT ..."}' }),
  );
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

  // Every run (hidden ones marked) as of a log position: the Runs page, and what its table polls.
  const runsSnapshot = () =>
    source.read(async (a, position) => ({ position, runs: await listRuns(a.db) }));

  app.get("/", async (c) => {
    const { position, runs } = await runsSnapshot();
    return c.html(page("Runs", "runs", <RunsPage position={position} runs={runs} />));
  });

  app.get("/api/runs", async (c) => {
    return c.body(toWire(await runsSnapshot()), 200, { "content-type": "application/json" });
  });

  app.get("/runs/:id", async (c) => {
    const runId = c.req.param("id");
    const q = (name: string) => c.req.query(name);
    const asked = {
      phase: choiceParam("phase", q("phase"), TRAJECTORY_PHASES),
      step: wholeNumberParam("step", q("step")),
      page: wholeNumberParam("page", q("page")) ?? 0,
      pageSize: TRAJECTORY_PAGE_SIZE,
      filter: trajectoryFilter(q),
    };
    const body = await source.read(async (a, position) => {
      const [run] = await listRuns(a.db, runId);
      if (!run) return null;
      const facts = await runFacts(a.db, runId);
      // An evaluation run has evaluation trajectories only.
      const phase = asked.phase ?? (facts.protocol ? "eval" : "rollout");
      const trajectories = await trajectoryPage(a.db, runId, { ...asked, phase })
        .catch((err) => {
          if (!(err instanceof UnknownAgentError)) throw err;
          const agents = err.agents.length > 0 ? err.agents.join(", ") : "none recorded yet";
          throw new BadParameterError("agent", err.agent, `an agent of this run (${agents})`);
        });
      const charts = facts.protocol ? {} : await runCharts(a.conn, runId);
      // Only a running run's page folds live values into means; a finished one needs no counts.
      const counts = run.status === "running";
      const shown = Object.fromEntries(
        Object.entries(charts).map(([name, chart]) => [name, forPage(chart, { counts })]),
      );
      return (
        <RunPage
          run={run}
          facts={facts}
          live={{
            runId,
            position,
            status: run.status,
            stepsDone: run.stepsDone,
            steps: run.steps,
            charts: shown,
          }}
          evals={await runEvals(a.db, runId)}
          placements={await recentPlacements(a.db, runId, TIMELINE_STEPS)}
          trajectories={trajectories}
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
    const text = (name: string) => c.req.query(name)?.trim() || undefined;
    const query: CompareQuery = {
      runs: (c.req.query("runs") ?? "").split(",").map((s) => s.trim()).filter(Boolean),
      groupBy: text("by") ?? "estimator",
      baseline: text("baseline"),
      where: text("where"),
      status: text("status"),
      kind: text("kind"),
      name: text("name"),
      hidden: text("hidden") === "1",
    };
    const result = await compareSelection(source, (q) => sql.query(q), query);
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
      if (err instanceof ResultTooLargeError) return c.json({ error: err.message }, 413);
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
    if (!name || !ISLANDS.includes(name)) return c.text("no such island", 404);
    // Bundles that did not build: 503 with the reason (islandBundles rejects with nothing else).
    const bundles = await islandBundles().catch((err: IslandBuildError) => err);
    if (bundles instanceof IslandBuildError) return c.text(bundles.message, 503);
    return c.body(bundles.get(name)!, 200, { "content-type": "text/javascript" });
  });

  app.get("/static/*", async (c) => {
    const file = STATIC_FILES.get(c.req.path.slice("/static/".length));
    if (!file) return c.text("no such file", 404);
    return c.body(await Deno.readFile(file.path), 200, { "content-type": file.type });
  });

  app.notFound((c) => c.html(page("Not found", "", <NotFound what={c.req.path} />), 404));
  return app;
}

/** The trajectory browser's filter from its URL parameters (correct, agent, reward-min/-max). */
function trajectoryFilter(q: (name: string) => string | undefined): TrajectoryFilter {
  const correct = choiceParam("correct", q("correct"), ["yes", "no"]);
  const [minReward, maxReward] = [
    numberParam("reward-min", q("reward-min")),
    numberParam("reward-max", q("reward-max")),
  ];
  if (minReward !== undefined && maxReward !== undefined && minReward > maxReward) {
    throw new BadParameterError(
      "reward-max",
      q("reward-max")!,
      `a number at least reward-min (${minReward})`,
    );
  }
  return {
    ...(correct === undefined ? {} : { correct: correct === "yes" }),
    ...(q("agent") ? { agent: q("agent") } : {}),
    ...(minReward === undefined ? {} : { minReward }),
    ...(maxReward === undefined ? {} : { maxReward }),
  };
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
