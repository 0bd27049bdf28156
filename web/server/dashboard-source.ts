/**
 * What the dashboard reads: the event store (opened, never appended to) and the DuckDB
 * projections beside it, brought up to date before each read. All DuckDB work on the projections
 * runs one piece at a time, so a page and the log position it reports always describe the same
 * projected events; user SQL runs beside it on read-only copies (see projection-snapshot.ts).
 */
import { type EventStore, type NewEvent, openStore } from "../../events/mod.ts";
import { type Analysis, catchUp, openAnalysis } from "../../analysis/mod.ts";

/** An open store plus its projections. */
export interface DashboardSource extends AsyncDisposable {
  readonly store: EventStore<NewEvent>;
  /**
   * Projects the events appended since the last read, then runs `read` with the projections and
   * the last projected log position; reads never overlap.
   */
  read<T>(read: (analysis: Analysis, position: number) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Opens a store that must already exist (the dashboard never creates one) and its projections.
 *
 * @example
 * ```ts
 * await using source = await openDashboardSource(".polyrl/events.sqlite");
 * const n = await source.read(async (a) => (await a.db.selectFrom("runs").selectAll().execute()).length);
 * ```
 */
export async function openDashboardSource(
  storeTarget: string,
  options: { readonly projections?: string } = {},
): Promise<DashboardSource> {
  const analysis = await openAnalysis(storeTarget, { path: options.projections });
  let store: EventStore<NewEvent>;
  try {
    store = await openStore(storeTarget, { readOnly: true });
  } catch (err) {
    await analysis.close();
    throw err;
  }
  let position = analysis.caughtUp.to;
  let queue: Promise<unknown> = Promise.resolve();
  const read = <T>(fn: (a: Analysis, position: number) => Promise<T>): Promise<T> => {
    const next = queue.then(async () => {
      position = (await catchUp(analysis.conn, store)).to;
      return fn(analysis, position);
    });
    queue = next.catch(() => {});
    return next;
  };
  const close = async () => {
    await queue;
    await store.close();
    await analysis.close();
  };
  return { store, read, close, [Symbol.asyncDispose]: close };
}
