/**
 * Parquet files of the analysis tables for the browser's DuckDB-Wasm, written with DuckDB's COPY
 * into a private temporary folder and rewritten when the projected log position moves on.
 */
import { EXPORTED } from "../../analysis/mod.ts";
import type { DashboardSource } from "./dashboard-source.ts";

/** Exports by table name. */
export interface ParquetExports extends AsyncDisposable {
  /** The file of `table` at the current log position; null for a name not in EXPORTED. */
  file(table: string): Promise<Uint8Array<ArrayBuffer> | null>;
  close(): Promise<void>;
}

/**
 * @example
 * ```ts
 * await using exports = await parquetExports(source);
 * const bytes = await exports.file("turns");
 * ```
 */
export async function parquetExports(source: DashboardSource): Promise<ParquetExports> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-web-parquet-" });
  const written = new Map<string, number>();
  const file = (table: string) => {
    if (!(EXPORTED as readonly string[]).includes(table)) return Promise.resolve(null);
    return source.read(async (a, position) => {
      const path = `${dir}/${table}.parquet`;
      if (written.get(table) !== position) {
        // `table` is one of EXPORTED's fixed names and `path` is ours: nothing user-given is spliced.
        await a.conn.run(`COPY (SELECT * FROM ${table}) TO '${path}' (FORMAT parquet)`);
        written.set(table, position);
      }
      return await Deno.readFile(path);
    });
  };
  const close = () => Deno.remove(dir, { recursive: true });
  return { file, close, [Symbol.asyncDispose]: close };
}
