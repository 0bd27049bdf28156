import type { DuckDBConnection } from "@duckdb/node-api";

/** What user SQL may do with files: read them (the CLI, the user's own rights) or nothing. */
export type FileAccess = "read" | "none";

/** How `sealDuckDB` seals an instance. */
export interface SealOptions {
  readonly files: FileAccess;
  /** DuckDB's `memory_limit` for the instance (e.g. "1GB"); DuckDB's default when absent */
  readonly memoryLimit?: string;
}

/**
 * Seals a DuckDB instance before it runs user SQL: no extension is downloaded and installed
 * (INSTALL and autoinstall write to ~/.duckdb), with `files: "none"` no file, URL or extension
 * outside the database can be reached and nothing spills to a temporary folder (DuckDB's default
 * one sits beside the database file, in the projections folder: a query over `memoryLimit`
 * fails instead), and `lock_configuration`, set last, makes every later SET, RESET or PRAGMA that
 * changes a setting fail, so nothing run afterwards can undo the seal. The settings are global:
 * they hold for every connection of the instance.
 *
 * The lock does not cover DuckDB's table functions that switch logging, profiling or the parser
 * (`enable_logging`, `enable_profiling`, ...): the statement check refuses those
 * (REFUSED_FUNCTIONS in read-only-statement.ts).
 *
 * @example
 * ```ts
 * import type { DuckDBConnection } from "@duckdb/node-api";
 * import { sealDuckDB } from "./seal-duckdb.ts";
 * declare const conn: DuckDBConnection;
 *
 * await sealDuckDB(conn, { files: "none", memoryLimit: "1GB" });
 * await conn.run("SET enable_external_access = true"); // throws: the configuration is locked
 * ```
 */
export async function sealDuckDB(conn: DuckDBConnection, options: SealOptions): Promise<void> {
  await conn.run("SET autoinstall_known_extensions = false");
  if (options.memoryLimit !== undefined) {
    if (!/^\d+(\.\d+)?\s*[KMGT]i?B$/i.test(options.memoryLimit)) {
      throw new Error(`internal: memory limit ${options.memoryLimit} is not like 512MB or 1GiB`);
    }
    await conn.run(`SET memory_limit = '${options.memoryLimit}'`);
  }
  if (options.files === "none") {
    await conn.run("SET autoload_known_extensions = false");
    await conn.run("SET temp_directory = ''");
    await conn.run("SET enable_external_access = false");
  }
  await conn.run("SET lock_configuration = true");
}
