import type { DuckDBConnection } from "@duckdb/node-api";
import { QueryTimeoutError } from "./sql-errors.ts";

/**
 * How long a query may go on after DuckDB was told to stop before the caller is answered anyway.
 * DuckDB checks for an interrupt between vectors; one long call inside a vector (a `repeat` of
 * hundreds of millions of characters) is not stopped until it returns.
 */
export const INTERRUPT_GRACE_MS = 1000;

/**
 * Runs `work` on `conn` and interrupts DuckDB if it is still running after `timeoutMs`: the
 * query stops inside the engine (its threads are freed) and the caller gets QueryTimeoutError.
 * `work` gets a signal that is aborted at the deadline, to stop between steps of its own. When
 * DuckDB has not stopped `INTERRUPT_GRACE_MS` after the interrupt, the caller gets the
 * QueryTimeoutError then, its `stillRunning` settling once the work is done: the connection must
 * not be closed or reused before that.
 *
 * @example
 * ```ts
 * import type { DuckDBConnection } from "@duckdb/node-api";
 * import { withDeadline } from "./query-deadline.ts";
 * declare const conn: DuckDBConnection;
 * declare const sql: string;
 *
 * const reader = await withDeadline(conn, 10_000, () => conn.runAndReadAll(sql));
 * ```
 */
export async function withDeadline<T>(
  conn: DuckDBConnection,
  timeoutMs: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const deadline = new AbortController();
  let grace: ReturnType<typeof setTimeout> | undefined;
  const running = work(deadline.signal);
  const settled = running.then(() => {}, () => {});
  const late = new Promise<never>((_, reject) => {
    deadline.signal.addEventListener("abort", () => {
      conn.interrupt();
      grace = setTimeout(
        () => reject(new QueryTimeoutError(timeoutMs, settled)),
        INTERRUPT_GRACE_MS,
      );
    });
  });
  late.catch(() => {});
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  try {
    return await Promise.race([running, late]);
  } catch (err) {
    if (err instanceof QueryTimeoutError) throw err;
    if (deadline.signal.aborted) throw new QueryTimeoutError(timeoutMs);
    throw err;
  } finally {
    clearTimeout(timer);
    clearTimeout(grace);
  }
}
