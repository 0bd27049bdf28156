import type { DuckDBConnection } from "@duckdb/node-api";
import { sqlString } from "../../analysis/mod.ts";

/**
 * Shuts the dashboard's own DuckDB out of the file system except `dir` (where it writes
 * exports). User SQL never runs on this instance (it runs on a sealed read-only one, see
 * projection-snapshot.ts); this bounds what the dashboard's own queries could reach. DuckDB does
 * not let the setting be turned back on, so it holds for the life of the instance (the dashboard
 * source runs it again on each generation's instance, see DashboardSource.prepare).
 *
 * @example
 * ```ts
 * import type { Analysis } from "../../analysis/mod.ts";
 * declare const analysis: Analysis;
 * const exportDir = await Deno.makeTempDir();
 * await confineDuckDB(analysis.conn, exportDir);
 * ```
 */
export async function confineDuckDB(conn: DuckDBConnection, dir: string): Promise<void> {
  await conn.run(`SET allowed_directories = [${sqlString(dir)}]`);
  await conn.run("SET enable_external_access = false");
}
