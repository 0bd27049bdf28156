/**
 * The files the dashboard serves from disk, by exact name only: nothing a request says is ever
 * joined into a path, so no request can reach another file.
 */
const NODE_MODULES = new URL("../../node_modules/", import.meta.url);

/** A served file: where it is and its content type. */
export interface StaticFile {
  readonly path: URL;
  readonly type: string;
}

const duck = (file: string, type: string): StaticFile => ({
  path: new URL(`@duckdb/duckdb-wasm/dist/${file}`, NODE_MODULES),
  type,
});

/**
 * Served under /static/NAME. A Map, so that names such as `constructor` or `__proto__` find
 * nothing rather than an Object.prototype member.
 */
export const STATIC_FILES: ReadonlyMap<string, StaticFile> = new Map([
  ["uplot.css", { path: new URL("uplot/dist/uPlot.min.css", NODE_MODULES), type: "text/css" }],
  ["duckdb/duckdb-eh.wasm", duck("duckdb-eh.wasm", "application/wasm")],
  ["duckdb/duckdb-mvp.wasm", duck("duckdb-mvp.wasm", "application/wasm")],
  ["duckdb/duckdb-browser-eh.worker.js", duck("duckdb-browser-eh.worker.js", "text/javascript")],
  ["duckdb/duckdb-browser-mvp.worker.js", duck("duckdb-browser-mvp.worker.js", "text/javascript")],
]);
