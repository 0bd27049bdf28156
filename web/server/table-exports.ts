/**
 * Files of the analysis tables for the browser's DuckDB-Wasm and for download, written with
 * DuckDB's COPY into a private temporary folder and rewritten when the source reads other
 * projections (the log moved on, or the store file was replaced by another). Parquet is the export format; CSV is what the console loads into DuckDB-Wasm,
 * because the Wasm build reads Parquet through an extension it downloads from
 * extensions.duckdb.org, which an offline machine cannot reach, while CSV is built in.
 */
import { type Analysis, EXPORTED } from "../../analysis/mod.ts";
import { confineDuckDB } from "./confine-duckdb.ts";
import type { DashboardSource } from "./dashboard-source.ts";

/** Formats a table is exported in. */
export type ExportFormat = "parquet" | "csv";

const COPY_OPTIONS: Readonly<Record<ExportFormat, string>> = {
  parquet: "(FORMAT parquet)",
  csv: "(FORMAT csv, HEADER true)",
};

/** Exports by table name. */
export interface TableExports extends AsyncDisposable {
  /** The file of `table` from the current projections; null for a name not in EXPORTED. */
  file(table: string, format: ExportFormat): Promise<Uint8Array<ArrayBuffer> | null>;
  close(): Promise<void>;
}

/**
 * Opens the export folder and confines the source's DuckDB to it (see confineDuckDB).
 *
 * @example
 * ```ts
 * import type { DashboardSource } from "./dashboard-source.ts";
 * declare const source: DashboardSource;
 * await using exports = await tableExports(source);
 * const bytes = await exports.file("turns", "parquet");
 * ```
 */
export async function tableExports(source: DashboardSource): Promise<TableExports> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-web-exports-" });
  await source.prepare((a) => confineDuckDB(a.conn, dir));
  // The projections each file was written from: a log position alone would not tell a store
  // replaced by another with as many events.
  const written = new Map<string, Analysis>();
  const file = (table: string, format: ExportFormat) => {
    if (!(EXPORTED as readonly string[]).includes(table)) return Promise.resolve(null);
    return source.read(async (a) => {
      const path = `${dir}/${table}.${format}`;
      if (written.get(path) !== a) {
        // `table` is one of EXPORTED's fixed names and `path` is ours: nothing user-given is spliced.
        await a.conn.run(`COPY (SELECT * FROM ${table}) TO '${path}' ${COPY_OPTIONS[format]}`);
        written.set(path, a);
      }
      return await Deno.readFile(path);
    });
  };
  const close = () => Deno.remove(dir, { recursive: true });
  return { file, close, [Symbol.asyncDispose]: close };
}
