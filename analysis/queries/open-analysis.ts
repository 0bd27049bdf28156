import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { Kysely } from "kysely";
import { openStore } from "../../events/mod.ts";
import { DuckDBDialect } from "../duckdb/mod.ts";
import type { CatchUpResult } from "../projections/projector.ts";
import type { AnalysisDb } from "./analysis-db.ts";
import { analysisPath } from "./analysis-path.ts";
import { type OpenGeneration, openGeneration } from "./open-generation.ts";
import { projectionsFolder } from "./projections-folder.ts";

/** Open projections: a raw DuckDB connection, a typed Kysely handle, and what catch-up did. */
export interface Analysis extends AsyncDisposable {
  /** the generation file read (in a temporary folder when the usual one cannot be written) */
  readonly path: string;
  readonly conn: DuckDBConnection;
  readonly db: Kysely<AnalysisDb>;
  readonly caughtUp: CatchUpResult;
  close(): Promise<void>;
}

/** Options of `openAnalysis`. */
export interface OpenAnalysisOptions {
  /** the projections folder (default: `analysisPath(storeTarget)`) */
  readonly path?: string;
  /** drop the projections and build them again from position 1 */
  readonly rebuild?: boolean;
}

/**
 * An Analysis over `instance`, one READ_ONLY instance of `generation`; `close` closes it and
 * then runs `dispose`.
 *
 * @example
 * ```ts
 * import type { EventStore, NewEvent } from "../../events/mod.ts";
 * import { analysisOf } from "./open-analysis.ts";
 * import { openGeneration } from "./open-generation.ts";
 * import type { ProjectionsFolder } from "./projections-folder.ts";
 * declare const folder: ProjectionsFolder;
 * declare const store: EventStore<NewEvent>;
 *
 * const generation = await openGeneration(folder, store);
 * const analysis = await analysisOf(generation, generation.instances[0], folder.dispose);
 * ```
 */
export async function analysisOf(
  generation: OpenGeneration,
  instance: DuckDBInstance,
  dispose: () => Promise<void> = () => Promise.resolve(),
): Promise<Analysis> {
  const conn = await instance.connect();
  const db = new Kysely<AnalysisDb>({ dialect: new DuckDBDialect({ instance }) });
  const close = async () => {
    await db.destroy();
    conn.closeSync();
    instance.closeSync();
    await dispose();
  };
  return {
    path: generation.path,
    conn,
    db,
    caughtUp: generation.caughtUp,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * Brings the projections of a store up to date, then opens them READ_ONLY, so nothing run on
 * them can write. The store is opened read-only: it must exist and is never created, migrated
 * or written. Any number of processes (CLI tasks, dashboards) do this at once on one store: each
 * reads an immutable generation of the projections, and the one that finds the log moved past
 * the newest generation makes the next (see openGeneration).
 *
 * @example
 * ```ts
 * import { openAnalysis } from "./open-analysis.ts";
 *
 * await using a = await openAnalysis(".polyrl/events.sqlite");
 * const runs = await a.db.selectFrom("runs").selectAll().execute();
 * ```
 */
export async function openAnalysis(
  storeTarget: string,
  options: OpenAnalysisOptions = {},
): Promise<Analysis> {
  const store = await openStore(storeTarget, { readOnly: true });
  try {
    const folder = await projectionsFolder(options.path ?? analysisPath(storeTarget));
    let generation: OpenGeneration;
    try {
      generation = await openGeneration(folder, store, { rebuild: options.rebuild });
    } catch (err) {
      await folder.dispose();
      throw err;
    }
    return await analysisOf(generation, generation.instances[0], folder.dispose);
  } finally {
    await store.close();
  }
}
