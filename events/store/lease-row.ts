/**
 * Reading `run_leases` rows back, the same on both stores: SQLite returns integers, Postgres
 * returns int8 as strings.
 *
 * @example
 * ```ts
 * import type { DatabaseSync } from "node:sqlite";
 * import { LEASE_SELECT, leaseRow } from "./lease-row.ts";
 *
 * declare const db: DatabaseSync;
 * const leases = db.prepare(`${LEASE_SELECT} ORDER BY run_id`).all().map(leaseRow);
 * ```
 */
import type { RunLease } from "./event-store.ts";

/** The query of every lease, without its ORDER BY. */
export const LEASE_SELECT =
  "SELECT run_id, host, pid, started_at, heartbeat_at, ended_at FROM run_leases";

/**
 * A `run_leases` row as a RunLease.
 *
 * @example
 * ```ts
 * leaseRow({ run_id: "r", host: "h", pid: "7", started_at: "1", heartbeat_at: "2", ended_at: null });
 * // { runId: "r", host: "h", pid: 7, startedAt: 1, heartbeatAt: 2, endedAt: null }
 * ```
 */
export function leaseRow(r: Readonly<Record<string, unknown>>): RunLease {
  return Object.freeze({
    runId: r.run_id as string,
    host: r.host as string,
    pid: Number(r.pid),
    startedAt: Number(r.started_at),
    heartbeatAt: Number(r.heartbeat_at),
    endedAt: r.ended_at === null || r.ended_at === undefined ? null : Number(r.ended_at),
  });
}
