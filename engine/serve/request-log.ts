/**
 * The server's request log: one line per request once the server is done with it (a stream: after
 * its last event, or when its client left), as vLLM's server logs each request (uvicorn's access
 * log), with what a model server's operator asks of a request besides its route and status: which
 * model or adapter answered, and the tokens it read and wrote.
 *
 *     2026-12-03T19:14:45.123Z 127.0.0.1:53412 POST /v1/completions 200 412ms model=solver-v1 prompt_tokens=31 completion_tokens=15
 *
 * A client that left before its answer: status 499 (nginx's "client closed request"), or for a
 * stream, whose 200 had gone out, `client_gone` at the end of the line.
 */
import type { Context, MiddlewareHandler } from "hono";

/** What the request log reads of a request that named a model. */
export interface RequestUsage {
  /** The model or adapter the request named (the base's name when it named none). */
  readonly model: string;
  readonly promptTokens?: number;
  readonly completionTokens?: number;
}

/** The Hono environment of the model server: Deno's handler info, and what handlers note. */
export interface ServeEnv {
  Bindings: Deno.ServeHandlerInfo<Deno.NetAddr>;
  Variables: {
    usage: RequestUsage;
    /** A streamed answer's end: true when its client left first. */
    streamEnd: Promise<boolean>;
  };
}

/**
 * Notes which model a request used and its token counts, for its log line.
 *
 * @example
 * ```ts
 * import type { Context } from "hono";
 * import { noteUsage } from "./request-log.ts";
 *
 * declare const c: Context;
 * noteUsage(c, { model: "embedded", promptTokens: 12, completionTokens: 16 });
 * ```
 */
export function noteUsage(c: Context, usage: RequestUsage): void {
  c.set("usage", usage);
}

/**
 * Notes that the answer is a stream, which ends when `end` resolves (true: its client left), so
 * that the log line waits for it.
 *
 * @example
 * ```ts
 * import type { Context } from "hono";
 * import { noteStreamEnd } from "./request-log.ts";
 *
 * declare const c: Context;
 * const ended = Promise.withResolvers<boolean>();
 * noteStreamEnd(c, ended.promise);
 * ended.resolve(false); // after the last event: the line is written, without client_gone
 * ```
 */
export function noteStreamEnd(c: Context, end: Promise<boolean>): void {
  c.set("streamEnd", end);
}

/** The fields known when a request arrives: time, client, method and path. */
function requestFields(c: Context<ServeEnv>): string[] {
  const { hostname, port } = c.env.remoteAddr;
  return [
    new Date().toISOString(),
    `${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`,
    c.req.method,
    // Percent-encoded as sent: a path cannot break the line.
    new URL(c.req.url).pathname,
  ];
}

/** The fields known once the response has gone: status, duration, model and tokens. */
function outcomeFields(
  status: number,
  milliseconds: number,
  usage: RequestUsage | undefined,
  clientGone: boolean,
): string[] {
  const fields = [String(status), `${Math.round(milliseconds)}ms`];
  if (usage !== undefined) {
    fields.push(`model=${usage.model}`);
    if (usage.promptTokens !== undefined) fields.push(`prompt_tokens=${usage.promptTokens}`);
    if (usage.completionTokens !== undefined) {
      fields.push(`completion_tokens=${usage.completionTokens}`);
    }
  }
  if (clientGone) fields.push("client_gone");
  return fields;
}

/**
 * The middleware that writes each request's line with `write`; it goes first, so refused requests
 * are logged too.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { requestLog, type ServeEnv } from "./request-log.ts";
 *
 * const app = new Hono<ServeEnv>();
 * app.use(requestLog((line) => console.error(line)));
 * ```
 */
export function requestLog(write: (line: string) => void): MiddlewareHandler<ServeEnv> {
  return async (c, next) => {
    const started = performance.now();
    // Read now: Deno closes the request once the response has gone.
    const arrived = requestFields(c);
    await next();
    const status = c.res.status;
    const finish = (clientGone: boolean) => {
      const outcome = outcomeFields(
        status,
        performance.now() - started,
        c.get("usage"),
        clientGone,
      );
      write([...arrived, ...outcome].join(" "));
    };
    const streamEnd = c.get("streamEnd");
    if (streamEnd === undefined) finish(false);
    else void streamEnd.then(finish);
  };
}
