/**
 * What the project's local HTTP servers share (the dashboard in web/, the model server in
 * engine/serve/): the Host allow-list that shuts out DNS rebinding.
 *
 * @example
 * ```ts
 * import { allowedHosts, hostGuard } from "../../events/http/mod.ts";
 * const hosts = allowedHosts({ hostname: "127.0.0.1", port: 8000 });
 * app.use(hostGuard(() => hosts, { server: "this dashboard", command: "deno task web" }));
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
