/**
 * DuckDB-Wasm in the browser over the server's table exports: started once, each table fetched
 * the first time a query names it and exposed as a view of the same name. Tables come as CSV,
 * which DuckDB-Wasm reads natively; its Parquet reader is an extension fetched from the internet.
 */
// @ts-types="./duckdb-wasm.d.ts"
import * as duckdb from "@duckdb/duckdb-wasm";

let started: Promise<{ db: duckdb.AsyncDuckDB; conn: duckdb.AsyncDuckDBConnection }> | null = null;
const loaded = new Set<string>();
/** whether the browser lacked WebAssembly exceptions and got the MVP build */
let mvp = false;

/**
 * The MVP build's JavaScript glue calls `_setThrew`, which the module never exports, whenever
 * DuckDB throws: every failed query then reads "_setThrew is not defined" instead of DuckDB's
 * message. The EH build (native WebAssembly exceptions, in every current browser) has no such
 * glue, so it is chosen wherever it runs; the MVP build remains for browsers without it.
 */
async function start(): Promise<{ db: duckdb.AsyncDuckDB; conn: duckdb.AsyncDuckDBConnection }> {
  const at = (p: string) => new URL(p, location.href).href;
  const fallback = at("/static/duckdb/duckdb-mvp.wasm");
  const bundle = await duckdb.selectBundle({
    mvp: { mainModule: fallback, mainWorker: at("/static/duckdb/duckdb-browser-mvp.worker.js") },
    eh: {
      mainModule: at("/static/duckdb/duckdb-eh.wasm"),
      mainWorker: at("/static/duckdb/duckdb-browser-eh.worker.js"),
    },
  });
  mvp = bundle.mainModule === fallback;
  const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), new Worker(bundle.mainWorker!));
  await db.instantiate(bundle.mainModule, bundle.pthreadWorker);
  return { db, conn: await db.connect() };
}

/** DuckDB's error, or what to do where the MVP build lost it. */
function queryError(err: unknown): Error {
  const e = err instanceof Error ? err : new Error(String(err));
  if (!mvp || !/_setThrew/.test(e.message)) return e;
  return new Error(
    "the query failed, but this browser lacks WebAssembly exceptions, so DuckDB-Wasm cannot " +
      'say why: press "run on server" to read DuckDB\'s message',
  );
}

/** Arrow's type ids: decimals (DuckDB-Wasm's HUGEINTs too, at scale 0), dates, timestamps. */
const ARROW = Object.freeze({ decimal: 7, date: 8, timestamp: 10 });

/** An integer as a number where that is exact (up to 2^53), else as its digits. */
function exactInteger(digits: string): number | string {
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : digits;
}

/**
 * A cell as the server's console answers it. Arrow hands a decimal over as its unscaled integer
 * (-1.25 as the object "-125"): it is divided by 10^scale, so that the table shows -1.25 and the
 * quick chart can draw it; an integer too large to be exact in a double stays text. Dates and
 * timestamps come as milliseconds: ISO text, so that the chart does not take them for values.
 */
function plain(v: unknown, type: duckdb.ArrowType): unknown {
  if (typeof v === "bigint") return exactInteger(String(v));
  if ((type.typeId === ARROW.date || type.typeId === ARROW.timestamp) && typeof v === "number") {
    return new Date(v).toISOString();
  }
  if (type.typeId === ARROW.decimal && v !== null && typeof v === "object") {
    const scale = type.scale ?? 0;
    return scale === 0 ? exactInteger(String(v)) : Number(String(v)) / 10 ** scale;
  }
  return v;
}

/**
 * Runs `sql` in DuckDB-Wasm, first loading the CSV export of every table it names.
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
  // A start that failed (the wasm did not load) is tried again by the next query.
  started ??= start().catch((err) => {
    started = null;
    throw err;
  });
  const { db, conn } = await started;
  for (const table of tables) {
    if (loaded.has(table) || !new RegExp(`\\b${table}\\b`, "i").test(sql)) continue;
    const res = await fetch(`/data/${table}.csv`);
    if (!res.ok) throw new Error(`could not fetch the ${table} export: ${res.status}`);
    await db.registerFileBuffer(`${table}.csv`, new Uint8Array(await res.arrayBuffer()));
    await conn.query(`CREATE OR REPLACE TABLE ${table} AS SELECT * FROM read_csv('${table}.csv')`);
    loaded.add(table);
  }
  const result = await conn.query(sql).catch((err) => Promise.reject(queryError(err)));
  const fields = result.schema.fields;
  const columns = fields.map((f) => f.name);
  const rows = result.toArray().map((r) => {
    const o = r.toJSON() as Record<string, unknown>;
    return fields.map((f) => plain(o[f.name], f.type));
  });
  return { columns, rows };
}
