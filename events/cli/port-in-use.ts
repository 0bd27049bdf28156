/**
 * A server task (`deno task web`, `deno task serve`) whose port another process holds: instead of
 * Deno's `AddrInUse`, a usage error (exit 2) naming a port that is free now.
 */
import { UsageError } from "./usage-error.ts";

/** How far above the taken port a free one is looked for before any free port is taken. */
const PORTS_TRIED = 100;

/** The first port above `port` that `hostname` can bind now, else any free one. */
function freePortAbove(hostname: string, port: number): number {
  for (let next = port + 1; next <= Math.min(port + PORTS_TRIED, 65535); next++) {
    try {
      Deno.listen({ hostname, port: next }).close();
      return next;
    } catch {
      // Taken, or not ours to bind (a privileged port): try the next.
    }
  }
  const any = Deno.listen({ hostname, port: 0 });
  const free = any.addr.port;
  any.close();
  return free;
}

/**
 * Starts a server with `listen`; when its port is taken, throws `port N is in use; pass --port M`
 * with M free at the time of the check.
 *
 * @example
 * ```ts
 * import { listenOrSuggestPort } from "./port-in-use.ts";
 *
 * declare const handler: Deno.ServeHandler;
 * const server = await listenOrSuggestPort(
 *   "127.0.0.1",
 *   8000,
 *   async () => Deno.serve({ hostname: "127.0.0.1", port: 8000 }, handler),
 * );
 * ```
 */
export async function listenOrSuggestPort<T>(
  hostname: string,
  port: number,
  listen: () => Promise<T>,
): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    if (!(err instanceof Deno.errors.AddrInUse)) throw err;
    throw new UsageError(
      `port ${port} is in use; pass --port ${freePortAbove(hostname, port)}, or stop the ` +
        `process listening on ${hostname}:${port}`,
    );
  }
}
