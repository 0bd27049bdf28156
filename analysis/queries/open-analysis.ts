import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { Kysely } from "kysely";
import { openStore } from "../../events/mod.ts";
import { DuckDBDialect } from "../duckdb/mod.ts";
import { catchUp, type CatchUpResult, rebuild } from "../projections/projector.ts";
import type { AnalysisDb } from "./analysis-db.ts";
import { analysisPath } from "./analysis-path.ts";
import {
  isUnwritable,
  type ProjectionsFile,
  projectionsFile,
  temporaryProjectionsFile,
} from "./projections-file.ts";

/** The projections file is locked by another process (DuckDB allows one writer per file). */
export class AnalysisBusyError extends Error {
  override name = "AnalysisBusyError";
  constructor(readonly path: string, detail: string) {
    super(
      `the projections file ${path} is in use by another process; stop it (a running ` +
        `\`deno task web\` or sql prompt) and retry. DuckDB said: ${detail}`,
    );
  }
}

async function openDuckDB(path: string, options?: Record<string, string>): Promise<DuckDBInstance> {
  try {
    return await DuckDBInstance.create(path, options);
  } catch (err) {
    const message = (err as Error).message;
    if (/Could not set lock/.test(message)) throw new AnalysisBusyError(path, message);
    throw err;
  }
}

/** The projections file at `path` opened for writing, or a temporary one where it cannot be. */
async function openWritable(path: string): Promise<[ProjectionsFile, DuckDBInstance]> {
  const file = await projectionsFile(path);
  try {
    return [file, await openDuckDB(file.path)];
  } catch (err) {
    if (file.temporary || !isUnwritable(err)) throw err;
  }
  const temporary = await temporaryProjectionsFile();
  return [temporary, await openDuckDB(temporary.path)];
}

/** Open projections: a raw DuckDB connection, a typed Kysely handle, and what catch-up did. */
export interface Analysis extends AsyncDisposable {
  /** the projections file (a temporary one when the usual folder cannot be written) */
  readonly path: string;
  readonly conn: DuckDBConnection;
  readonly db: Kysely<AnalysisDb>;
  readonly caughtUp: CatchUpResult;
  close(): Promise<void>;
}

/** Options of `openAnalysis`. */
export interface OpenAnalysisOptions {
  /** reopen the DuckDB file in READ_ONLY access mode after the catch-up */
  readonly readOnly?: boolean;
  /** the projections file (default: `analysisPath(storeTarget)`) */
  readonly path?: string;
  /** drop the projections and build them again from position 1 */
  readonly rebuild?: boolean;
}

/**
 * Brings the projections of a store up to date, then opens them. The store is opened read-only:
 * it must exist and is never created, migrated or written. With `readOnly` the DuckDB file is
 * reopened in READ_ONLY access mode after the catch-up, so nothing run on it can write.
 *
 * @example
 * ```ts
 * await using a = await openAnalysis(".polyrl/events.sqlite", { readOnly: true });
 * const runs = await a.db.selectFrom("runs").selectAll().execute();
 * ```
 */
export async function openAnalysis(
  storeTarget: string,
  options: OpenAnalysisOptions = {},
): Promise<Analysis> {
  const store = await openStore(storeTarget, { readOnly: true });
  let file: ProjectionsFile;
  let instance: DuckDBInstance;
  let conn: DuckDBConnection;
  let caughtUp: CatchUpResult;
  try {
    [file, instance] = await openWritable(options.path ?? analysisPath(storeTarget));
    conn = await instance.connect();
    try {
      caughtUp = await (options.rebuild ? rebuild : catchUp)(conn, store);
    } catch (err) {
      conn.closeSync();
      instance.closeSync();
      await file.dispose();
      throw err;
    }
  } finally {
    await store.close();
  }
  if (options.readOnly) {
    conn.closeSync();
    instance.closeSync();
    instance = await openDuckDB(file.path, { access_mode: "READ_ONLY" });
    conn = await instance.connect();
  }
  const db = new Kysely<AnalysisDb>({ dialect: new DuckDBDialect({ instance }) });
  const close = async () => {
    await db.destroy();
    conn.closeSync();
    instance.closeSync();
    await file.dispose();
  };
  return { path: file.path, conn, db, caughtUp, close, [Symbol.asyncDispose]: close };
}
