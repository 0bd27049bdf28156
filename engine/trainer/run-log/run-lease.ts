/**
 * The writer lease a training process holds on its run while it appends to it: (run, host, pid)
 * renewed every LEASE_HEARTBEAT_MS in the store's lease table, and released (ended) when the
 * process lets go of the run. A run left "running" in the log whose lease expired or was
 * released, or whose process on this host is gone, was interrupted. The lease is kept beside the
 * log, never in it, so a run's events (and its replay) are the same with or without one.
 * Lease writes never stop training: a failed renewal is retried at the next heartbeat.
 */
import { type EventStore, LEASE_HEARTBEAT_MS, type RunLease } from "../../../events/mod.ts";

/** A held lease. */
export interface HeldLease {
  /** Stops the heartbeat and records the lease as ended; never throws. */
  release(): Promise<void>;
}

/**
 * Takes the lease on `runId` in `store` for this process and renews it until released.
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../../events/mod.ts";
 * import { holdRunLease } from "./run-lease.ts";
 *
 * declare const store: EventStore;
 * declare function train(): Promise<void>; // the run's steps
 * const lease = await holdRunLease(store, "smoke-1");
 * try {
 *   await train();
 * } finally {
 *   await lease.release();
 * }
 * ```
 */
export async function holdRunLease(
  store: EventStore,
  runId: string,
  options: { readonly intervalMs?: number } = {},
): Promise<HeldLease> {
  const startedAt = Date.now();
  const lease = (heartbeatAt: number, endedAt: number | null): RunLease => ({
    runId,
    host: Deno.hostname(),
    pid: Deno.pid,
    startedAt,
    heartbeatAt,
    endedAt,
  });
  let writing: Promise<void> = store.putLease(lease(startedAt, null)).catch(() => {});
  await writing;
  const timer = setInterval(() => {
    // One renewal at a time: a slow store never piles them up.
    writing = writing.then(() => store.putLease(lease(Date.now(), null))).catch(() => {});
  }, options.intervalMs ?? LEASE_HEARTBEAT_MS);
  // The heartbeat never keeps a finished process alive.
  Deno.unrefTimer(timer);
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      await writing;
      const now = Date.now();
      await store.putLease(lease(now, now)).catch(() => {});
    },
  };
}
