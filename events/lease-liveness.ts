/**
 * When a run's writer lease says its writer is alive. A writer renews its lease every
 * LEASE_HEARTBEAT_MS; readers take it for dead once it released the lease; on the reader's own
 * host, once its process is gone (at once); elsewhere, once the lease went LEASE_TIMEOUT_MS
 * without renewal. The timeout is twelve heartbeats: a heartbeat is a timer on the training
 * process's event loop, so a long synchronous stretch of compute (a WASM session run) delays it,
 * and a run must not flicker to "interrupted" while it computes.
 *
 * @example
 * ```ts
 * import { leaseIsLive } from "./lease-liveness.ts";
 * import type { EventStore } from "./store/event-store.ts";
 *
 * declare const store: EventStore;
 * const lease = (await store.leases()).find((l) => l.runId === "smoke-1");
 * if (lease && await leaseIsLive(lease)) console.log(`written by pid ${lease.pid}`);
 * ```
 */
import type { RunLease } from "./store/event-store.ts";

/** A writer renews its lease this often (ms). */
export const LEASE_HEARTBEAT_MS = 5_000;

/** A lease not renewed for this long (ms) has expired: its writer is taken for dead. */
export const LEASE_TIMEOUT_MS = 60_000;

/**
 * Whether a deno process `pid` runs on this machine: read from /proc on Linux (its command line
 * names deno, so a pid the system gave to another program since does not count); null elsewhere
 * (or when /proc cannot be read), where only the heartbeat tells.
 *
 * @example
 * ```ts
 * import { processExists } from "./lease-liveness.ts";
 *
 * await processExists(Deno.pid); // true on Linux
 * ```
 */
export async function processExists(pid: number): Promise<boolean | null> {
  if (Deno.build.os !== "linux") return null;
  try {
    const cmdline = await Deno.readTextFile(`/proc/${pid}/cmdline`);
    return cmdline.includes("deno");
  } catch (err) {
    return err instanceof Deno.errors.NotFound ? false : null;
  }
}

/**
 * Whether a lease's writer is alive: not released, and its process exists where it runs on this
 * host, else renewed within LEASE_TIMEOUT_MS of `now`. On its own host a process is asked
 * directly, since a long synchronous stretch of compute can hold its heartbeat back.
 *
 * @example
 * ```ts
 * import { leaseIsLive } from "./lease-liveness.ts";
 *
 * await leaseIsLive({ runId: "r", host: "h", pid: 1, startedAt: 0, heartbeatAt: 0, endedAt: 0 });
 * // false: released
 * ```
 */
export async function leaseIsLive(lease: RunLease, now = Date.now()): Promise<boolean> {
  if (lease.endedAt !== null) return false;
  const exists = lease.host === Deno.hostname() ? await processExists(lease.pid) : null;
  return exists ?? now - lease.heartbeatAt <= LEASE_TIMEOUT_MS;
}
