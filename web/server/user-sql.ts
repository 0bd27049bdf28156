/**
 * The dashboard's SQL endpoint behind the HTTP layer: one SELECT per request, run on a
 * read-only, sealed instance of the projections (see projection-snapshot.ts) on a connection of its
 * own, so a heavy query holds neither the pages nor other queries, bounded in time (DuckDB is
 * interrupted), in memory (the instance's memory limit) and in the rows and bytes sent back.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { type QueryTable, QueryTimeoutError, runReadOnlyQuery } from "../../analysis/mod.ts";
import type { DashboardSource } from "./dashboard-source.ts";

/** Limits of one query from the browser. */
export interface UserSqlLimits {
  /** wall time inside DuckDB before it is interrupted */
  readonly timeoutMs: number;
  /** rows sent back; the result says `truncated` when there were more */
  readonly maxRows: number;
  /**
   * bytes sent back (estimated before a value is read out of DuckDB): the result says
   * `truncated` when there were more; a first row over it is refused (ResultTooLargeError)
   */
  readonly maxBytes: number;
}

/** Defaults of `deno task web`: 10 s, 10,000 rows and 32 MiB. */
export const USER_SQL_LIMITS: UserSqlLimits = Object.freeze({
  timeoutMs: 10_000,
  maxRows: 10_000,
  maxBytes: 32 * 1024 * 1024,
});

/** Runs user SQL for the dashboard. */
export interface UserSql extends AsyncDisposable {
  /**
   * Runs one SELECT; throws WriteRefusedError (RefusedFunctionError among them),
   * MalformedSqlError, QueryTimeoutError or ResultTooLargeError.
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
 * import type { DashboardSource } from "./dashboard-source.ts";
 * declare const source: DashboardSource;
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
    let conn: DuckDBConnection;
    try {
      conn = await lease.connect();
    } catch (err) {
      lease.release();
      throw err;
    }
    // The connection closes, and the lease ends, once DuckDB is done with the query: a query
    // answered at its deadline may still be inside DuckDB (see withDeadline), and closing a
    // connection or an instance under a running query is not safe.
    let done!: () => void;
    const finished = new Promise<void>((resolve) => done = resolve);
    running.set(conn, finished);
    const finish = () => {
      running.delete(conn);
      conn.closeSync();
      lease.release();
      done();
    };
    try {
      const result = await runReadOnlyQuery(conn, sql, limits);
      finish();
      return result;
    } catch (err) {
      if (err instanceof QueryTimeoutError && err.stillRunning) err.stillRunning.then(finish);
      else finish();
      throw err;
    }
  };
  const close = async () => {
    for (const conn of running.keys()) conn.interrupt();
    await Promise.all(running.values());
  };
  return Promise.resolve({ query, close, [Symbol.asyncDispose]: close });
}
