import type { DuckDBConnection } from "@duckdb/node-api";
import { QueryTimeoutError } from "./sql-errors.ts";

/**
 * Runs `work` on `conn` and interrupts DuckDB if it is still running after `timeoutMs`: the
 * query stops inside the engine (its threads are freed) and the caller gets QueryTimeoutError.
 * The connection should not be reused for a query that must not see the interrupt.
 *
 * @example
 * ```ts
 * const reader = await withDeadline(conn, 10_000, () => conn.runAndReadAll(sql));
 * ```
 */
export async function withDeadline<T>(
  conn: DuckDBConnection,
  timeoutMs: number,
  work: () => Promise<T>,
): Promise<T> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    conn.interrupt();
  }, timeoutMs);
  try {
    return await work();
  } catch (err) {
    if (timedOut) throw new QueryTimeoutError(timeoutMs);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
