/** Browser entry of the sql-console island: the console wired to DuckDB-Wasm. */
import { h } from "preact";
import { hydrateIslands } from "./hydrate.ts";
import { SqlConsole, type SqlConsoleProps } from "./sql-console.tsx";
import { runInBrowser } from "./duckdb-browser.ts";

hydrateIslands(
  "sql-console",
  (props: SqlConsoleProps) => h(SqlConsole, { ...props, runInBrowser }),
);
