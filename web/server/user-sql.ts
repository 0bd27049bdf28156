/**
 * The dashboard's SQL endpoint behind the HTTP layer: one SELECT per request, run on a
 * read-only, sealed instance of the projections (see projection-snapshot.ts) on a connection of its
 * own, so a heavy query holds neither the pages nor other queries, bounded in time (DuckDB is
 * interrupted) and in the rows sent back.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { type QueryTable, runReadOnlyQuery } from "../../analysis/mod.ts";
import type { DashboardSource } from "./dashboard-source.ts";

/** Limits of one query from the browser. */
export interface UserSqlLimits {
  /** wall time inside DuckDB before it is interrupted */
  readonly timeoutMs: number;
  /** rows sent back; the result says `truncated` when there were more */
  readonly maxRows: number;
}

/** Defaults of `deno task web`: 10 s and 10,000 rows. */
export const USER_SQL_LIMITS: UserSqlLimits = Object.freeze({ timeoutMs: 10_000, maxRows: 10_000 });

/** Runs user SQL for the dashboard. */
export interface UserSql extends AsyncDisposable {
  /**
   * Runs one SELECT; throws WriteRefusedError, MalformedSqlError or QueryTimeoutError.
   */
  query(sql: string): Promise<QueryTable>;
  /** Interrupts the queries still running and deletes the copies. */
  close(): Promise<void>;
}

/**
 * Opens the SQL runner of a dashboard source.
 *
 * @example
 * ```ts
 * await using sql = await openUserSql(source, USER_SQL_LIMITS);
 * const table = await sql.query("SELECT count(*) FROM turns");
 * ```
 */
export function openUserSql(
  source: DashboardSource,
  limits: UserSqlLimits = USER_SQL_LIMITS,
): Promise<UserSql> {
  const running = new Map<DuckDBConnection, Promise<unknown>>();
  const query = async (sql: string) => {
    const lease = await source.lease();
    try {
      const conn = await lease.connect();
      const result = runReadOnlyQuery(conn, sql, limits);
      running.set(conn, result.catch(() => {}));
      try {
        return await result;
      } finally {
        running.delete(conn);
        conn.closeSync();
      }
    } finally {
      lease.release();
    }
  };
  const close = async () => {
    for (const conn of running.keys()) conn.interrupt();
    await Promise.all(running.values());
  };
  return Promise.resolve({ query, close, [Symbol.asyncDispose]: close });
}
