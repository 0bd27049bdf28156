import type { DuckDBConnection } from "@duckdb/node-api";
import {
  type EventStore,
  LEASE_TIMEOUT_MS,
  type NewEvent,
  processExists,
  type RunLease,
} from "../../events/mod.ts";
import { appendRows } from "./append-rows.ts";

/** A `run_leases` row: the lease, its process judged where it runs on this host. */
type LeaseRow = [
  runId: string,
  host: string,
  pid: number,
  startedAt: number,
  heartbeatAt: number,
  endedAt: number | null,
  pidAlive: boolean | null,
];

async function leaseRow(lease: RunLease, host: string): Promise<LeaseRow> {
  const held = lease.endedAt === null && lease.host === host;
  return [
    lease.runId,
    lease.host,
    lease.pid,
    lease.startedAt,
    lease.heartbeatAt,
    lease.endedAt,
    held ? await processExists(lease.pid) : null,
  ];
}

/** The store's leases as `run_leases` rows now, by run id. */
async function currentRows(store: EventStore<NewEvent>): Promise<LeaseRow[]> {
  const host = Deno.hostname();
  return await Promise.all((await store.leases()).map((l) => leaseRow(l, host)));
}

/**
 * Replaces the `run_leases` table with the store's writer leases as they are now, in one
 * transaction. Leases are not events, so this runs at every catch-up, new events or none: a
 * writer that died changes no event, only its lease stops being renewed.
 *
 * @example
 * ```ts
 * await copyLeases(conn, store); // SELECT status FROM runs now sees dead writers
 * ```
 */
export async function copyLeases(
  conn: DuckDBConnection,
  store: EventStore<NewEvent>,
): Promise<number> {
  const rows = await currentRows(store);
  await conn.run("BEGIN TRANSACTION");
  try {
    await conn.run("DELETE FROM run_leases");
    await appendRows(conn, new Map([["run_leases", rows]]));
    await conn.run("COMMIT");
  } catch (err) {
    await conn.run("ROLLBACK");
    throw err;
  }
  return rows.length;
}

/**
 * Whether the leases copied into a projection (read only, so it works READ_ONLY) still tell
 * what the store's tell: the same writers, ended or not, their processes (on this host) alive or
 * not, each heartbeat renewed less than half LEASE_TIMEOUT_MS after the copy. A projection that is kept while the log does
 * not move (a long step) then still never takes a live writer for dead: its copied heartbeat is
 * at most half a timeout behind, and the runs view allows a whole one.
 *
 * @example
 * ```ts
 * if (!await leasesCurrent(conn, store)) await catchUp(writable, store); // copies them again
 * ```
 */
export async function leasesCurrent(
  conn: DuckDBConnection,
  store: EventStore<NewEvent>,
): Promise<boolean> {
  const copied = new Map(
    (await conn.runAndReadAll(
      "SELECT run_id, host, pid, started_at_ms, heartbeat_at_ms, ended_at_ms, pid_alive " +
        "FROM run_leases",
    )).getRowsJS().map((
      r,
    ) => [r[0] as string, r.map((v) => typeof v === "bigint" ? Number(v) : v)]),
  );
  const now = await currentRows(store);
  return now.length === copied.size && now.every((row) => {
    const was = copied.get(row[0]);
    return was !== undefined &&
      row.every((v, i) => i === 4 || v === was[i]) &&
      row[4] - (was[4] as number) < LEASE_TIMEOUT_MS / 2;
  });
}
