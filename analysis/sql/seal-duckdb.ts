import type { DuckDBConnection } from "@duckdb/node-api";

/** What user SQL may do with files: read them (the CLI, the user's own rights) or nothing. */
export type FileAccess = "read" | "none";

/**
 * Seals a DuckDB instance before it runs user SQL: no extension is downloaded and installed
 * (INSTALL and autoinstall write to ~/.duckdb), with `files: "none"` no file, URL or extension
 * outside the database can be reached, and `lock_configuration` makes every later SET, RESET or
 * PRAGMA that changes a setting fail, so nothing run afterwards can undo the seal. The settings
 * are global: they hold for every connection of the instance.
 *
 * @example
 * ```ts
 * await sealDuckDB(conn, { files: "none" });
 * await conn.run("SET enable_external_access = true"); // throws: the configuration is locked
 * ```
 */
export async function sealDuckDB(
  conn: DuckDBConnection,
  options: { readonly files: FileAccess },
): Promise<void> {
  await conn.run("SET autoinstall_known_extensions = false");
  if (options.files === "none") {
    await conn.run("SET autoload_known_extensions = false");
    await conn.run("SET enable_external_access = false");
  }
  await conn.run("SET lock_configuration = true");
}
