import type { DuckDBConnection } from "@duckdb/node-api";
import {
  type EventStore,
  LEASE_TIMEOUT_MS,
  type NewEvent,
  processExists,
  type RunLease,
} from "../../events/mod.ts";
import { appendRows } from "./append-rows.ts";
import { rowValues } from "./define-table.ts";
import { type JudgedLease, TABLES } from "./tables.ts";

async function judged(lease: RunLease, host: string): Promise<JudgedLease> {
  const held = lease.endedAt === null && lease.host === host;
  return { lease, pidAlive: held ? await processExists(lease.pid) : null };
}

/** The store's leases now, each judged on this host. */
async function currentLeases(store: EventStore<NewEvent>): Promise<JudgedLease[]> {
  const host = Deno.hostname();
  return await Promise.all((await store.leases()).map((l) => judged(l, host)));
}

/**
 * Replaces the `run_leases` table with the store's writer leases as they are now, in one
 * transaction. Leases are not events, so this runs at every catch-up, new events or none: a
 * writer that died changes no event, only its lease stops being renewed.
 *
 * @example
 * ```ts
 * import type { DuckDBConnection } from "@duckdb/node-api";
 * import type { EventStore, NewEvent } from "../../events/mod.ts";
 * import { copyLeases } from "./copy-leases.ts";
 * declare const conn: DuckDBConnection;
 * declare const store: EventStore<NewEvent>;
 *
 * await copyLeases(conn, store); // SELECT status FROM runs now sees dead writers
 * ```
 */
export async function copyLeases(
  conn: DuckDBConnection,
  store: EventStore<NewEvent>,
): Promise<number> {
  const rows = (await currentLeases(store)).map((l) => rowValues(TABLES.run_leases, l));
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
 * import type { DuckDBConnection } from "@duckdb/node-api";
 * import type { EventStore, NewEvent } from "../../events/mod.ts";
 * import { leasesCurrent } from "./copy-leases.ts";
 * import { catchUp } from "./projector.ts";
 * declare const conn: DuckDBConnection;
 * declare const writable: DuckDBConnection;
 * declare const store: EventStore<NewEvent>;
 *
 * if (!await leasesCurrent(conn, store)) await catchUp(writable, store); // copies them again
 * ```
 */
export async function leasesCurrent(
  conn: DuckDBConnection,
  store: EventStore<NewEvent>,
): Promise<boolean> {
  const copied = new Map(
    (await conn.runAndReadAll("SELECT * FROM run_leases")).getRowObjectsJS().map((
      r,
    ) => [r.run_id as string, r]),
  );
  const now = await currentLeases(store);
  const { columnList, columns } = TABLES.run_leases;
  return now.length === copied.size && now.every((lease) => {
    const was = copied.get(lease.lease.runId);
    const value = (v: unknown) => typeof v === "bigint" ? Number(v) : v;
    return was !== undefined &&
      columnList.every(([name, c]) =>
        name === "heartbeat_at_ms" || c.value(lease) === value(was[name])
      ) &&
      columns.heartbeat_at_ms.value(lease) - (value(was.heartbeat_at_ms) as number) <
        LEASE_TIMEOUT_MS / 2;
  });
}
