/**
 * Cross-site request refusal: a page on another site can make the browser send requests to the
 * dashboard (a form or a no-cors fetch posts text/plain without asking), so a request whose
 * `Origin` is another site's is refused, and a POST must be `application/json`, which no page
 * can send cross-site without a CORS preflight the dashboard never grants.
 */
import type { MiddlewareHandler } from "hono";

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
 * Middleware answering 403 to a request from another origin and 415 to a POST that is not JSON.
 * The dashboard's own origin is the request's Host (checked by hostGuard before this).
 *
 * @example
 * ```ts
 * app.use(hostGuard(() => hosts), sameOriginOnly());
 * ```
 */
export function sameOriginOnly(): MiddlewareHandler {
  return async (c, next) => {
    const origin = c.req.header("origin");
    const host = (c.req.header("host") ?? new URL(c.req.url).host).toLowerCase();
    if (origin !== undefined && originHost(origin) !== host) {
      return c.json({
        error: `403 forbidden: a request from origin ${origin}; this dashboard answers its own ` +
          `pages (http://${host}) only`,
      }, 403);
    }
    const type = c.req.header("content-type")?.split(";")[0].trim().toLowerCase();
    if (c.req.method === "POST" && type !== "application/json") {
      return c.json({
        error: `415 unsupported media type ${type ?? "(none)"}: send Content-Type: ` +
          `application/json with a body {"sql": "SELECT ..."}`,
      }, 415);
    }
    return await next();
  };
}
