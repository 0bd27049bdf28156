import { type AllowedHosts, allowedHosts } from "../../events/http/mod.ts";
import { createApp } from "./app.tsx";
import { openDashboardSource } from "./dashboard-source.ts";
import { islandBundles } from "./island-bundles.ts";
import { tableExports } from "./table-exports.ts";
import { openUserSql, USER_SQL_LIMITS } from "./user-sql.ts";

/** A running dashboard. */
export interface Dashboard extends AsyncDisposable {
  readonly url: string;
  readonly finished: Promise<void>;
  close(): Promise<void>;
}

/** How the dashboard listens and what it takes. */
export interface DashboardOptions {
  /** address to bind; 127.0.0.1 unless told otherwise */
  readonly hostname?: string;
  /** port to bind; 0 picks a free one */
  readonly port?: number;
  /** Host names answered besides the bound address and localhost (`--allow-host`) */
  readonly allowHosts?: readonly string[];
  /** time limit of one SQL query (`--query-timeout-ms`); 10 s by default */
  readonly queryTimeoutMs?: number;
}

/**
 * Opens the store's projections, starts building the island bundles and serves the dashboard.
 *
 * @example
 * ```ts
 * await using d = await serveDashboard(".polyrl/events.sqlite", { port: 0 });
 * console.log(d.url); // http://127.0.0.1:41234/
 * ```
 */
export async function serveDashboard(
  storeTarget: string,
  options: DashboardOptions = {},
): Promise<Dashboard> {
  const source = await openDashboardSource(storeTarget);
  const exports = await tableExports(source);
  const sql = await openUserSql(source, {
    ...USER_SQL_LIMITS,
    timeoutMs: options.queryTimeoutMs ?? USER_SQL_LIMITS.timeoutMs,
  });
  // Built ahead of the first page, without waiting: a failure is logged, the pages say their
  // interactive parts are unavailable, and the next request for an island's script tries again.
  islandBundles().catch(() => {});
  const hostname = options.hostname ?? "127.0.0.1";
  let hosts: AllowedHosts | null = null;
  const app = createApp({ source, exports, sql, hosts: () => hosts! });
  const server = Deno.serve({
    hostname,
    port: options.port ?? 8100,
    onListen: () => {},
  }, app.fetch);
  // Set before any request is handled: the handler runs on a later turn of the event loop.
  hosts = allowedHosts({ hostname, port: server.addr.port }, options.allowHosts);
  const shown = hostname.includes(":") ? `[${hostname}]` : hostname;
  const url = `http://${shown}:${server.addr.port}/`;
  let closing: Promise<void> | null = null;
  const close = () =>
    closing ??= (async () => {
      await server.shutdown();
      await sql.close();
      await exports.close();
      await source.close();
    })();
  return { url, finished: server.finished, close, [Symbol.asyncDispose]: close };
}
