/**
 * What the dashboard reads: the event store (opened, never appended to) and a READ_ONLY
 * generation of its projections (see analysis/queries/open-generation.ts), so any number of
 * dashboards and CLI tasks read one store at once. Before a read, when the log has moved past the
 * generation, the source moves to a newer one (making it where no other process has), at most
 * once per `generationIntervalMs` (a second by default): a read that comes sooner waits for the
 * rest of the interval, so every read sees the events appended before it began, and a run
 * appending all the time costs one catch-up per second, not one per request. Reads run one at a
 * time, and a generation never changes, so a page and the log position it reports always
 * describe the same projected events.
 *
 * A store file replaced while the dashboard runs (another file renamed over it, or one copied
 * over it) is noticed as the CLI notices it, which opens the store afresh each time: before a
 * read, when stat says the file changed, the store is opened again, and where that is another
 * file or another log, the source moves to it and to projections built from it.
 */
import { type EventStore, isPostgresUrl, type NewEvent, openStore } from "../../events/mod.ts";
import {
  type Analysis,
  analysisOf,
  analysisPath,
  leasesCurrent,
  openGeneration,
  type ProjectionsFolder,
  projectionsFolder,
} from "../../analysis/mod.ts";
import type { AnalysisReader } from "../data/analysis-reader.ts";
import {
  type ProjectionSnapshot,
  projectionSnapshot,
  type SnapshotLease,
} from "./projection-snapshot.ts";

/** The shortest time between two generations the dashboard moves to: one second. */
export const GENERATION_INTERVAL_MS = 1000;

/** An open store plus its projections. */
export interface DashboardSource extends AsyncDisposable, AnalysisReader {
  /** the store read now: another one once the file at its path was replaced */
  readonly store: EventStore<NewEvent>;
  /**
   * Runs `read` with the projections and their log position, after moving to a newer generation
   * where the log has moved on (waiting for the rest of the interval since the last one); reads
   * never overlap.
   */
  read<T>(read: (analysis: Analysis, position: number) => Promise<T>): Promise<T>;
  /**
   * Runs `step` on the current generation's projections now, and on each later one before it
   * is read (a setting such as confineDuckDB's holds for one DuckDB instance).
   */
  prepare(step: (analysis: Analysis) => Promise<void>): Promise<void>;
  /** A lease on the sealed instance of the current generation, for user SQL. */
  lease(): Promise<SnapshotLease>;
  close(): Promise<void>;
}

/** Options of `openDashboardSource`. */
export interface DashboardSourceOptions {
  /** the projections folder (default: `analysisPath(storeTarget)`) */
  readonly projections?: string;
  /** the shortest time between two generations (default GENERATION_INTERVAL_MS) */
  readonly generationIntervalMs?: number;
}

interface Current {
  readonly analysis: Analysis;
  readonly snapshot: ProjectionSnapshot;
  readonly position: number;
  readonly openedAt: number;
}

async function openCurrent(
  folder: ProjectionsFolder,
  store: EventStore<NewEvent>,
  steps: readonly ((analysis: Analysis) => Promise<void>)[],
): Promise<Current> {
  const generation = await openGeneration(folder, store, { instances: 2 });
  const [pages, sql] = generation.instances;
  const analysis = await analysisOf(generation, pages);
  try {
    const snapshot = await projectionSnapshot(sql);
    for (const step of steps) await step(analysis);
    return { analysis, snapshot, position: generation.caughtUp.to, openedAt: Date.now() };
  } catch (err) {
    sql.closeSync();
    await analysis.close();
    throw err;
  }
}

/** The store file as stat sees it. */
interface FileStamp {
  /** device and inode: which file is at the path */
  readonly file: string;
  /** size and modification time: whether that file was written since */
  readonly content: string;
}

/** The stamp of the SQLite file `target`, "missing" where there is none; null for Postgres. */
async function fileStamp(target: string): Promise<FileStamp | null> {
  if (isPostgresUrl(target)) return null;
  try {
    const info = await Deno.stat(target);
    return { file: `${info.dev}:${info.ino}`, content: `${info.size}:${info.mtime?.getTime()}` };
  } catch (err) {
    // Mid-replacement; opening it says what is there, or that nothing is.
    if (err instanceof Deno.errors.NotFound) return { file: "missing", content: "" };
    throw err;
  }
}

/**
 * Whether `fresh`, just opened at the path `open` was opened from, holds the log `open` reads:
 * the same store id, and the same event at `open`'s last position. A store rewritten in place
 * (a copy of another one, or of an older backup) differs in one or the other.
 */
async function sameLog(open: EventStore<NewEvent>, fresh: EventStore<NewEvent>) {
  if (fresh.storeId !== open.storeId) return false;
  try {
    const last = await open.lastPosition();
    return last === 0 || await fresh.eventHash(last) === await open.eventHash(last);
  } catch {
    // A connection opened before the file was rewritten may read it as damaged: another log.
    return false;
  }
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
  options: DashboardSourceOptions = {},
): Promise<DashboardSource> {
  const interval = options.generationIntervalMs ?? GENERATION_INTERVAL_MS;
  let stamp = await fileStamp(storeTarget);
  let store = await openStore(storeTarget, { readOnly: true });
  const steps: ((analysis: Analysis) => Promise<void>)[] = [];
  let folder: ProjectionsFolder;
  try {
    folder = await projectionsFolder(options.projections ?? analysisPath(storeTarget));
  } catch (err) {
    await store.close();
    throw err;
  }
  let current: Current;
  try {
    current = await openCurrent(folder, store, steps);
  } catch (err) {
    await folder.dispose();
    await store.close();
    throw err;
  }
  // The store now at the path where its file was replaced, else null. A file changed in place
  // by its own writer (a checkpoint) holds the same log: it is kept open and its stamp taken.
  const replacement = async () => {
    const now = await fileStamp(storeTarget);
    if (now === null || (now.file === stamp?.file && now.content === stamp.content)) return null;
    const fresh = await openStore(storeTarget, { readOnly: true });
    if (now.file === stamp?.file && await sameLog(store, fresh)) {
      stamp = now;
      await fresh.close();
      return null;
    }
    return { store: fresh, stamp: now };
  };
  const moveOn = async () => {
    const replaced = await replacement();
    // Writer leases are no events: a generation is left once they moved on (copy-leases.ts).
    if (
      replaced === null &&
      await store.lastPosition() === current.position &&
      await leasesCurrent(current.analysis.conn, store)
    ) return;
    // Waited out rather than skipped, so a read always sees the events appended before it.
    const wait = current.openedAt + interval - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const previous = current;
    try {
      current = await openCurrent(folder, replaced?.store ?? store, steps);
    } catch (err) {
      // The old store stays, and its stamp: the next read tries the replacement again.
      await replaced?.store.close();
      throw err;
    }
    if (replaced) {
      // Live feeds on the old store end at their next wait; their browsers reconnect to this one.
      await store.close();
      ({ store, stamp } = replaced);
    }
    // Reads run one at a time, so none is on the previous pages' instance; user SQL still
    // running on the previous snapshot keeps it until its lease is released.
    previous.snapshot.retire();
    await previous.analysis.close();
  };
  let queue: Promise<unknown> = Promise.resolve();
  const queued = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = queue.then(fn);
    queue = next.catch(() => {});
    return next;
  };
  const read = <T>(fn: (a: Analysis, position: number) => Promise<T>): Promise<T> =>
    queued(async () => {
      await moveOn();
      return fn(current.analysis, current.position);
    });
  const prepare = (step: (analysis: Analysis) => Promise<void>) =>
    queued(async () => {
      await step(current.analysis);
      steps.push(step);
    });
  const lease = () =>
    queued(async () => {
      await moveOn();
      return current.snapshot.lease();
    });
  const close = async () => {
    await queue;
    current.snapshot.retire();
    await current.analysis.close();
    await store.close();
    await folder.dispose();
  };
  return {
    get store() {
      return store;
    },
    read,
    prepare,
    lease,
    close,
    [Symbol.asyncDispose]: close,
  };
}
