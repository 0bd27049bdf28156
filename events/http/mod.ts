/**
 * What the project's local HTTP servers share (the dashboard in web/, the model server in
 * engine/serve/): the Host allow-list that shuts out DNS rebinding, and the refusal of requests
 * another site's page makes the browser send.
 *
 * @example
 * ```ts
 * import type { Hono } from "hono";
 * import { allowedHosts, hostGuard, sameOriginOnly } from "../../events/http/mod.ts";
 *
 * declare const app: Hono;
 * const hosts = allowedHosts({ hostname: "127.0.0.1", port: 8000 });
 * app.use(
 *   hostGuard(() => hosts, { server: "this dashboard", command: "deno task web" }),
 *   sameOriginOnly({ server: "this dashboard", body: '{"sql": "SELECT ..."}' }),
 * );
 * ```
 *
 * @module
 */
export {
  type AllowedHosts,
  allowedHosts,
  HOST_NAME,
  hostGuard,
  type HostGuardOptions,
  hostName,
} from "./allowed-hosts.ts";
export { sameOriginOnly, type SameOriginOptions } from "./same-origin.ts";
