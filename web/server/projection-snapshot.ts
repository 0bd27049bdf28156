/**
 * Read-only copies of the dashboard's projections, for user SQL. The dashboard's own DuckDB must
 * stay writable (it projects new events before every read), and DuckDB cannot attach one file
 * twice in a process, so user SQL runs on a checkpointed copy opened in a second instance with
 * access_mode READ_ONLY and sealed (no file or network access, configuration locked). A copy is
 * taken when the projected log position has moved since the last one; the previous copy is
 * closed and deleted once the queries still running on it are done.
 */
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { sealDuckDB } from "../../analysis/sql/seal-duckdb.ts";
import type { DashboardSource } from "./dashboard-source.ts";

/** One query's hold on a copy: connections to it, and the release that lets it be deleted. */
export interface SnapshotLease {
  connect(): Promise<DuckDBConnection>;
  release(): void;
}

/** The copies of one dashboard's projections. */
export interface ProjectionSnapshots extends AsyncDisposable {
  /** Projects new events, copies the projections if they moved on, and leases the latest copy. */
  acquire(): Promise<SnapshotLease>;
  close(): Promise<void>;
}

interface Snapshot {
  readonly position: number;
  readonly path: string;
  readonly instance: DuckDBInstance;
  users: number;
  retired: boolean;
}

/**
 * Opens the copies of `source`'s projections in a private temporary folder.
 *
 * @example
 * ```ts
 * await using snapshots = await projectionSnapshots(source);
 * const lease = await snapshots.acquire();
 * const conn = await lease.connect();
 * await conn.run("DELETE FROM turns"); // throws: the copy is attached read-only
 * conn.closeSync();
 * lease.release();
 * ```
 */
export async function projectionSnapshots(source: DashboardSource): Promise<ProjectionSnapshots> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-web-sql-" });
  let current: Snapshot | null = null;
  let taken = 0;

  const dispose = (s: Snapshot) => {
    s.instance.closeSync();
    return Deno.remove(s.path).catch(() => {});
  };
  const release = (s: Snapshot) => {
    s.users--;
    if (s.retired && s.users === 0) void dispose(s);
  };
  const take = async (checkpoint: DuckDBConnection, from: string, position: number) => {
    // After CHECKPOINT the file holds every projected row and the WAL is empty; nothing writes
    // to it until this read returns, so the copy is consistent.
    await checkpoint.run("CHECKPOINT");
    const path = `${dir}/projections-${position}-${++taken}.duckdb`;
    await Deno.copyFile(from, path);
    const instance = await DuckDBInstance.create(path, { access_mode: "READ_ONLY" });
    const conn = await instance.connect();
    try {
      await sealDuckDB(conn, { files: "none" });
    } finally {
      conn.closeSync();
    }
    return { position, path, instance, users: 0, retired: false };
  };

  const acquire = () =>
    source.read(async (analysis, position) => {
      if (current?.position !== position) {
        const previous = current;
        current = await take(analysis.conn, analysis.path, position);
        if (previous) {
          previous.retired = true;
          if (previous.users === 0) await dispose(previous);
        }
      }
      const held = current;
      held.users++;
      let released = false;
      return {
        connect: () => held.instance.connect(),
        release: () => {
          if (!released) release(held);
          released = true;
        },
      };
    });
  const close = async () => {
    await source.read(async () => {
      if (current) await dispose(current);
      current = null;
    });
    await Deno.remove(dir, { recursive: true });
  };
  return { acquire, close, [Symbol.asyncDispose]: close };
}
