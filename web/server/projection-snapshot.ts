/**
 * User SQL's own instance of one projection generation: opened READ_ONLY beside the instance the
 * pages read (DuckDB settings are per instance, and user SQL needs a sealed one: no file or
 * network access, no spilling, a memory limit, configuration locked, while the pages' instance
 * writes exports), leased by the
 * queries that run on it, and closed once the dashboard has moved to a newer generation and the
 * last query on it is done. Both instances read the same immutable file, so a query sees exactly
 * what the pages show at that generation.
 */
import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { sealDuckDB } from "../../analysis/mod.ts";

/**
 * DuckDB's memory limit for user SQL's instance: a query that needs more fails (it does not
 * spill to disk, see sealDuckDB) rather than growing the dashboard's process.
 */
export const USER_SQL_MEMORY_LIMIT = "1GB";

/** One query's hold on a snapshot: connections to it, and the release that lets it close. */
export interface SnapshotLease {
  connect(): Promise<DuckDBConnection>;
  release(): void;
}

/** The sealed instance of one generation. */
export interface ProjectionSnapshot {
  lease(): SnapshotLease;
  /** Takes no more leases; the instance closes when the last one is released. */
  retire(): void;
}

/**
 * Seals `instance` (a READ_ONLY instance of a generation) for user SQL; it is closed by `retire`.
 *
 * @example
 * ```ts
 * import { DuckDBInstance } from "@duckdb/node-api";
 * const instance = await DuckDBInstance.create(":memory:"); // a generation's projection database
 * const snapshot = await projectionSnapshot(instance);
 * const lease = snapshot.lease();
 * const conn = await lease.connect();
 * await conn.run("SELECT * FROM read_csv('/etc/passwd')"); // throws: no file access
 * conn.closeSync();
 * lease.release();
 * snapshot.retire();
 * ```
 */
export async function projectionSnapshot(instance: DuckDBInstance): Promise<ProjectionSnapshot> {
  const conn = await instance.connect();
  try {
    await sealDuckDB(conn, { files: "none", memoryLimit: USER_SQL_MEMORY_LIMIT });
  } finally {
    conn.closeSync();
  }
  let users = 0;
  let retired = false;
  const closeIfDone = () => {
    if (retired && users === 0) instance.closeSync();
  };
  const lease = (): SnapshotLease => {
    if (retired) throw new Error("internal: a retired projection snapshot was leased");
    users++;
    let released = false;
    return {
      connect: () => instance.connect(),
      release: () => {
        if (released) return;
        released = true;
        users--;
        closeIfDone();
      },
    };
  };
  const retire = () => {
    if (retired) return;
    retired = true;
    closeIfDone();
  };
  return { lease, retire };
}
