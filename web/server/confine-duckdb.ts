import type { DuckDBConnection } from "@duckdb/node-api";
import { sqlString } from "../../analysis/sql/run-query.ts";

/**
 * Shuts the dashboard's DuckDB out of the file system except `dir` (where it writes exports):
 * a SELECT sent to the SQL endpoint cannot read_csv('/etc/passwd') nor COPY anywhere. DuckDB
 * does not let the setting be turned back on, so it holds for the life of the instance.
 *
 * @example
 * ```ts
 * await confineDuckDB(analysis.conn, exportDir);
 * ```
 */
export async function confineDuckDB(conn: DuckDBConnection, dir: string): Promise<void> {
  await conn.run(`SET allowed_directories = [${sqlString(dir)}]`);
  await conn.run("SET enable_external_access = false");
}
