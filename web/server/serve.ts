import { createApp } from "./app.tsx";
import { openDashboardSource } from "./dashboard-source.ts";
import { islandBundles } from "./island-bundles.ts";
import { tableExports } from "./table-exports.ts";

/** A running dashboard. */
export interface Dashboard extends AsyncDisposable {
  readonly url: string;
  readonly finished: Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens the store's projections, builds the island bundles and serves the dashboard
 * (127.0.0.1 unless told otherwise; port 0 picks a free one).
 *
 * @example
 * ```ts
 * await using d = await serveDashboard(".polyrl/events.sqlite", { port: 0 });
 * console.log(d.url); // http://127.0.0.1:41234/
 * ```
 */
export async function serveDashboard(
  storeTarget: string,
  options: { readonly hostname?: string; readonly port?: number; readonly quiet?: boolean } = {},
): Promise<Dashboard> {
  const source = await openDashboardSource(storeTarget);
  const exports = await tableExports(source);
  try {
    await islandBundles();
  } catch (err) {
    await exports.close();
    await source.close();
    throw err;
  }
  const app = createApp(source, exports);
  const hostname = options.hostname ?? "127.0.0.1";
  const server = Deno.serve({
    hostname,
    port: options.port ?? 8000,
    onListen: () => {},
  }, app.fetch);
  const shown = hostname.includes(":") ? `[${hostname}]` : hostname;
  const url = `http://${shown}:${server.addr.port}/`;
  let closing: Promise<void> | null = null;
  const close = () =>
    closing ??= (async () => {
      await server.shutdown();
      await exports.close();
      await source.close();
    })();
  return { url, finished: server.finished, close, [Symbol.asyncDispose]: close };
}
