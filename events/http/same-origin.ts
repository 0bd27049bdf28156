/**
 * Cross-site request refusal for the project's local HTTP servers (the dashboard, the model
 * server). A page on another site can make the browser send requests to them (a form or a no-cors
 * fetch posts text/plain without asking), so a request from another origin is refused, and a POST
 * must be `application/json`, which no page can send cross-site without a CORS preflight these
 * servers never grant. Clients that are not browsers (curl, the openai client, the trainer's
 * rollouts) send no `Origin` and pass.
 */
import type { Context, MiddlewareHandler } from "hono";

/** Who refuses, for the messages, and how the refusal is written. */
export interface SameOriginOptions {
  /** e.g. "this dashboard" */
  readonly server: string;
  /** What a POST body holds, for the 415 message, e.g. `{"sql": "SELECT ..."}`. */
  readonly body: string;
  /** Writes the 403 or 415 response (default: `{"error": message}` with the status). */
  readonly respond?: (c: Context, status: 403 | 415, message: string) => Response;
}

/** The host part of an Origin header, or null for "null" and anything unparsable. */
function originHost(origin: string): string | null {
  try {
    const url = new URL(origin);
    return url.protocol === "http:" || url.protocol === "https:" ? url.host : null;
  } catch {
    return null;
  }
}

/**
 * Whether the browser says another site made this request (`Sec-Fetch-Site`), for requests that
 * carry no `Origin`. Following a link from another site to a page (a GET navigation) is not
 * refused: a page opened that way is the user's, and its answer goes to the user, not the site.
 */
function crossSiteFetch(c: Context): boolean {
  const site = c.req.header("sec-fetch-site")?.toLowerCase();
  if (site !== "cross-site" && site !== "same-site") return false;
  const navigation = c.req.header("sec-fetch-mode")?.toLowerCase() === "navigate";
  return !(navigation && (c.req.method === "GET" || c.req.method === "HEAD"));
}

/**
 * Middleware answering 403 to a request from another origin and 415 to a POST that is not JSON.
 * The server's own origin is the request's Host (checked by hostGuard before this).
 *
 * @example
 * ```ts
 * import type { Hono } from "hono";
 * import { type AllowedHosts, hostGuard } from "./allowed-hosts.ts";
 * import { sameOriginOnly } from "./same-origin.ts";
 *
 * declare const app: Hono;
 * declare const hosts: AllowedHosts;
 * app.use(
 *   hostGuard(() => hosts, { server: "this dashboard", command: "deno task web" }),
 *   sameOriginOnly({ server: "this dashboard", body: '{"sql": "SELECT ..."}' }),
 * );
 * ```
 */
export function sameOriginOnly(options: SameOriginOptions): MiddlewareHandler {
  const respond = options.respond ??
    ((c: Context, status: 403 | 415, message: string) => c.json({ error: message }, status));
  return async (c, next) => {
    const origin = c.req.header("origin");
    const host = (c.req.header("host") ?? new URL(c.req.url).host).toLowerCase();
    if (origin !== undefined ? originHost(origin) !== host : crossSiteFetch(c)) {
      const from = origin !== undefined
        ? `origin ${origin}`
        : `another site (Sec-Fetch-Site: ${c.req.header("sec-fetch-site")})`;
      return respond(
        c,
        403,
        `403 forbidden: a request from ${from}; ${options.server} answers its own ` +
          `pages (http://${host}) and clients that send no Origin only`,
      );
    }
    const type = c.req.header("content-type")?.split(";")[0].trim().toLowerCase();
    if (c.req.method === "POST" && type !== "application/json") {
      return respond(
        c,
        415,
        `415 unsupported media type ${type ?? "(none)"}: send Content-Type: ` +
          `application/json with a body ${options.body}`,
      );
    }
    return await next();
  };
}
