import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import type { EventStore, NewEvent } from "../../events/mod.ts";
import { leasesCurrent } from "../projections/copy-leases.ts";
import { catchUp, type CatchUpResult, readState, rebuild } from "../projections/projector.ts";
import {
  type Generation,
  generationPath,
  listGenerations,
  temporaryGenerationPath,
} from "./generation-files.ts";
import { withProjectionLock } from "./projection-lock.ts";
import type { ProjectionsFolder } from "./projections-folder.ts";

/** Options of `openGeneration`. */
export interface OpenGenerationOptions {
  /** build a new generation from position 1 even where the newest one is up to date */
  readonly rebuild?: boolean;
  /** READ_ONLY instances of the generation to open (default 1), e.g. one per sealing */
  readonly instances?: number;
}

/** A generation opened READ_ONLY; the caller closes the instances. */
export interface OpenGeneration {
  readonly path: string;
  readonly instances: readonly DuckDBInstance[];
  /** what was projected to make it (nothing, from = to, when the newest was up to date) */
  readonly caughtUp: CatchUpResult;
}

const unchanged = (position: number): CatchUpResult =>
  Object.freeze({
    kind: "catch-up",
    from: position,
    to: position,
    events: 0,
    rows: 0,
    rebuiltBecause: null,
  });

async function openReadOnly(path: string, count: number): Promise<DuckDBInstance[]> {
  const opened: DuckDBInstance[] = [];
  try {
    while (opened.length < count) {
      opened.push(await DuckDBInstance.create(path, { access_mode: "READ_ONLY" }));
    }
    return opened;
  } catch (err) {
    for (const instance of opened) instance.closeSync();
    throw err;
  }
}

/**
 * The last projected position of the generation `conn` reads where it is up to date with
 * `store` (every event, the current writer leases), else null. Reads only.
 */
async function generationUpToDate(
  conn: DuckDBConnection,
  store: EventStore<NewEvent>,
): Promise<number | null> {
  const state = await readState(conn);
  if (state === null || state.storeId !== store.storeId) return null;
  if (state.position !== await store.lastPosition()) return null;
  if (state.position > 0 && await store.eventHash(state.position) !== state.positionHash) {
    return null;
  }
  // Writer leases are no events: a generation is behind once they moved on (copy-leases.ts).
  if (!await leasesCurrent(conn, store)) return null;
  return state.position;
}

async function upToDate(
  instance: DuckDBInstance,
  store: EventStore<NewEvent>,
): Promise<number | null> {
  const conn = await instance.connect();
  try {
    return await generationUpToDate(conn, store);
  } finally {
    conn.closeSync();
  }
}

/** What opening a listed generation found. */
type Found =
  | { readonly kind: "up-to-date"; readonly generation: OpenGeneration }
  | { readonly kind: "behind" }
  | { readonly kind: "unreadable"; readonly why: string };

/** `generation` opened where it is up to date with `store`; else why it cannot be read. */
async function openIfUpToDate(
  generation: Generation,
  store: EventStore<NewEvent>,
  count: number,
): Promise<Found> {
  let instances: DuckDBInstance[];
  try {
    instances = await openReadOnly(generation.path, count);
  } catch (err) {
    // Unlinked since it was listed (a newer one superseded it), or a damaged file.
    return { kind: "unreadable", why: (err as Error).message };
  }
  const position = await upToDate(instances[0], store).catch(() => null);
  if (position !== null) {
    const caughtUp = unchanged(position);
    return { kind: "up-to-date", generation: { path: generation.path, instances, caughtUp } };
  }
  for (const instance of instances) instance.closeSync();
  return { kind: "behind" };
}

async function removeIfThere(path: string): Promise<void> {
  await Deno.remove(path).catch((err) => {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  });
}

/**
 * Builds the next generation from `from` (a copy of it; from scratch when null): caught up
 * read-write in a temporary file, checkpointed, closed, and renamed into place.
 */
async function build(
  folder: string,
  seq: number,
  from: string | null,
  store: EventStore<NewEvent>,
  rebuildAll: boolean,
): Promise<[string, CatchUpResult]> {
  const tmp = temporaryGenerationPath(folder);
  try {
    if (from) await Deno.copyFile(from, tmp);
    const instance = await DuckDBInstance.create(tmp);
    let caughtUp: CatchUpResult;
    try {
      const conn = await instance.connect();
      try {
        caughtUp = await (rebuildAll ? rebuild : catchUp)(conn, store);
        // Every row into the file and the WAL emptied: the renamed file is complete on its own.
        await conn.run("CHECKPOINT");
      } finally {
        conn.closeSync();
      }
    } finally {
      instance.closeSync();
    }
    await removeIfThere(`${tmp}.wal`);
    const path = generationPath(folder, seq);
    await Deno.rename(tmp, path);
    return [path, caughtUp];
  } catch (err) {
    await removeIfThere(tmp);
    await removeIfThere(`${tmp}.wal`);
    throw err;
  }
}

/**
 * Opens the newest projection generation of `store` in `folder` READ_ONLY, after making a new
 * one where the store's log has moved past it (or it was built from another store, or by
 * another schema version, or `rebuild` is asked). Reading takes no lock: any number of
 * processes read at once. Making a generation takes the folder's lock; under it the folder is
 * listed again (another process may have made an up-to-date one meanwhile), the newest is copied
 * and caught up, and the generations it supersedes and the temporary files of dead processes are
 * removed. A newest generation that cannot be opened (a damaged file) is built again from
 * position 1, its reason in `caughtUp.rebuiltBecause`.
 *
 * @example
 * ```ts
 * import type { EventStore, NewEvent } from "../../events/mod.ts";
 * import { analysisPath } from "./analysis-path.ts";
 * import { openGeneration } from "./open-generation.ts";
 * import { projectionsFolder } from "./projections-folder.ts";
 * declare const store: EventStore<NewEvent>;
 *
 * const folder = await projectionsFolder(analysisPath(store.target));
 * const { instances: [instance], caughtUp } = await openGeneration(folder, store);
 * console.log(`read at position ${caughtUp.to}`);
 * instance.closeSync();
 * await folder.dispose();
 * ```
 */
export async function openGeneration(
  folder: ProjectionsFolder,
  store: EventStore<NewEvent>,
  options: OpenGenerationOptions = {},
): Promise<OpenGeneration> {
  const count = options.instances ?? 1;
  const rebuildAll = options.rebuild ?? false;
  if (!rebuildAll) {
    const { newest } = await listGenerations(folder.path);
    const found = newest && await openIfUpToDate(newest, store, count);
    if (found?.kind === "up-to-date") return found.generation;
  }
  // Made again where it was deleted (the projections are disposable) while a dashboard runs.
  await Deno.mkdir(folder.path, { recursive: true });
  return await withProjectionLock(folder.path, async () => {
    const { newest, superseded, temporary } = await listGenerations(folder.path);
    let damaged: string | null = null;
    if (newest && !rebuildAll) {
      // Holding the lock, nothing can unlink `newest` before it is opened.
      const found = await openIfUpToDate(newest, store, count);
      if (found.kind === "up-to-date") return found.generation;
      if (found.kind === "unreadable") {
        damaged = `the newest generation ${newest.path} could not be opened: ${found.why}`;
      }
    }
    const from = rebuildAll || damaged ? null : newest?.path ?? folder.seed;
    const [path, built] = await build(folder.path, (newest?.seq ?? 0) + 1, from, store, rebuildAll);
    const caughtUp = damaged ? Object.freeze({ ...built, rebuiltBecause: damaged }) : built;
    for (const old of [...superseded, ...temporary, ...(newest ? [newest.path] : [])]) {
      await removeIfThere(old);
    }
    return { path, instances: await openReadOnly(path, count), caughtUp };
  });
}
