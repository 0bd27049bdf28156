import { isPostgresUrl, sha256Hex } from "../../events/mod.ts";

/**
 * The folder where the DuckDB projections of a store live (as generations, see
 * projection-generations.ts): beside an SQLite store (`runs.sqlite` -> `runs.analysis/`), or under
 * `.polyrl/` named by a hash of a Postgres URL (so no credentials end up in a file name).
 *
 * @example
 * ```ts
 * analysisPath(".polyrl/events.sqlite"); // ".polyrl/events.analysis"
 * ```
 */
export function analysisPath(storeTarget: string): string {
  if (isPostgresUrl(storeTarget)) {
    const digest = sha256Hex(new TextEncoder().encode(storeTarget)).slice(0, 16);
    return `.polyrl/analysis-${digest}`;
  }
  return `${storeTarget.replace(/\.(sqlite3?|db)$/, "")}.analysis`;
}
