/**
 * The Host names a local HTTP server (the dashboard, the model server) answers to. A page on
 * another site can point its own name at 127.0.0.1 (DNS rebinding) and then read the server as if
 * it were same-origin; the browser still sends that name in `Host`, so answering only the bound
 * address, localhost and the names given with `--allow-host` shuts it out.
 */
import type { Context, MiddlewareHandler } from "hono";

/** Decides whether a request's Host is this server's. */
export interface AllowedHosts {
  allows(host: string): boolean;
  /** the accepted values, for messages */
  readonly shown: readonly string[];
}

/**
 * What `--allow-host` takes: a host name or address, without scheme, port or path.
 *
 * @example
 * ```ts
 * import { HOST_NAME } from "./allowed-hosts.ts";
 *
 * HOST_NAME.test("lab.example.org"); // true
 * HOST_NAME.test("http://x"); // false
 * ```
 */
export const HOST_NAME =
  /^(\[[0-9a-f:.]+\]|[0-9a-f]*:[0-9a-f:.]+|[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*)$/i;

/** A Host value split into lower-case name (IPv6 in brackets) and port (80 when absent). */
function splitHost(host: string): { name: string; port: number } | null {
  const m = host.trim().toLowerCase().match(/^(\[[0-9a-f:.]+\]|[^:\[\]]+)(?::(\d{1,5}))?$/);
  return m ? { name: m[1], port: m[2] === undefined ? 80 : Number(m[2]) } : null;
}

/** An address as it appears in a Host value: IPv6 in brackets. */
export function hostName(address: string): string {
  const name = address.toLowerCase();
  return name.includes(":") && !name.startsWith("[") ? `[${name}]` : name;
}

/**
 * The bound address, `localhost`, `127.0.0.1` and `[::1]` on the bound port, plus `extra` names
 * (from `--allow-host`) on any port, as a reverse proxy in front may use its own.
 *
 * @example
 * ```ts
 * import { allowedHosts } from "./allowed-hosts.ts";
 *
 * const hosts = allowedHosts({ hostname: "127.0.0.1", port: 8000 }, ["lab.example"]);
 * hosts.allows("localhost:8000"); // true
 * hosts.allows("lab.example"); // true
 * hosts.allows("evil.example:8000"); // false
 * ```
 */
export function allowedHosts(
  bound: { readonly hostname: string; readonly port: number },
  extra: readonly string[] = [],
): AllowedHosts {
  const local = new Set([hostName(bound.hostname), "localhost", "127.0.0.1", "[::1]"]);
  const named = new Set(extra.map(hostName));
  return {
    allows(host) {
      const h = splitHost(host);
      return h !== null && (named.has(h.name) || (local.has(h.name) && h.port === bound.port));
    },
    shown: [...[...local].map((n) => `${n}:${bound.port}`), ...named],
  };
}

/** Who refuses a Host, for the message: the server's name and the command that starts it. */
export interface HostGuardOptions {
  /** e.g. "this dashboard" */
  readonly server: string;
  /** e.g. "deno task web" (the message suggests it with `--allow-host NAME`) */
  readonly command: string;
  /** Writes the 421 response (default: the message as plain text). */
  readonly respond?: (c: Context, message: string) => Response;
}

/**
 * Middleware answering 421 to a request whose Host is not allowed (`hosts` is read per request,
 * so a server can fill it in once it knows its port).
 *
 * @example
 * ```ts
 * import type { Hono } from "hono";
 * import { type AllowedHosts, hostGuard } from "./allowed-hosts.ts";
 *
 * declare const app: Hono;
 * declare const hosts: AllowedHosts;
 * app.use(hostGuard(() => hosts, { server: "this dashboard", command: "deno task web" }));
 * ```
 */
export function hostGuard(hosts: () => AllowedHosts, options: HostGuardOptions): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header("host") ?? new URL(c.req.url).host;
    const allowed = hosts();
    if (allowed.allows(host)) return await next();
    const name = splitHost(host)?.name ?? host;
    const message = `421 misdirected request: ${options.server} does not answer to Host ` +
      `"${host}" (it answers ${allowed.shown.join(", ")}). If you reach it by that name, start ` +
      `it with ${options.command} --allow-host ${name}`;
    return options.respond ? options.respond(c, message) : c.text(message, 421);
  };
}
