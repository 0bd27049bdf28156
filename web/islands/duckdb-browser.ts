/**
 * DuckDB-Wasm in the browser over the server's table exports: started once, each table fetched
 * the first time a query names it and exposed as a view of the same name. Tables come as CSV,
 * which DuckDB-Wasm reads natively; its Parquet reader is an extension fetched from the internet.
 */
// @ts-types="./duckdb-wasm.d.ts"
import * as duckdb from "@duckdb/duckdb-wasm";

let started: Promise<duckdb.AsyncDuckDBConnection> | null = null;
const loaded = new Set<string>();

async function start(): Promise<duckdb.AsyncDuckDBConnection> {
  const at = (p: string) => new URL(p, location.href).href;
  const bundle = await duckdb.selectBundle({
    mvp: {
      mainModule: at("/static/duckdb/duckdb-mvp.wasm"),
      mainWorker: at("/static/duckdb/duckdb-browser-mvp.worker.js"),
    },
  });
  const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), new Worker(bundle.mainWorker!));
  await db.instantiate(bundle.mainModule, bundle.pthreadWorker);
  const conn = await db.connect();
  (globalThis as { __duckdb?: duckdb.AsyncDuckDB }).__duckdb = db;
  return conn;
}

/** Numbers for BIGINT results (exact up to 2^53; larger stay text). */
function plain(v: unknown): unknown {
  if (typeof v === "bigint") {
    return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(v)
      : String(v);
  }
  return v;
}

/**
 * Runs `sql` in DuckDB-Wasm, first loading the Parquet export of every table it names.
 *
 * @example
 * ```ts
 * const { columns, rows } = await runInBrowser("SELECT count(*) FROM turns", ["turns"]);
 * ```
 */
export async function runInBrowser(
  sql: string,
  tables: readonly string[],
): Promise<{ columns: string[]; rows: unknown[][] }> {
  started ??= start();
  const conn = await started;
  const db = (globalThis as { __duckdb?: duckdb.AsyncDuckDB }).__duckdb!;
  for (const table of tables) {
    if (loaded.has(table) || !new RegExp(`\\b${table}\\b`, "i").test(sql)) continue;
    const res = await fetch(`/data/${table}.csv`);
    if (!res.ok) throw new Error(`could not fetch the ${table} export: ${res.status}`);
    await db.registerFileBuffer(`${table}.csv`, new Uint8Array(await res.arrayBuffer()));
    await conn.query(`CREATE OR REPLACE TABLE ${table} AS SELECT * FROM read_csv('${table}.csv')`);
    loaded.add(table);
  }
  const result = await conn.query(sql);
  const columns = result.schema.fields.map((f) => f.name);
  const rows = result.toArray().map((r) => {
    const o = r.toJSON() as Record<string, unknown>;
    return columns.map((c) => plain(o[c]));
  });
  return { columns, rows };
}
