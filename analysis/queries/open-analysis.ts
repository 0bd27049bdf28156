import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { Kysely } from "kysely";
import { openStore } from "../../events/mod.ts";
import { DuckDBDialect } from "../duckdb/mod.ts";
import { catchUp, type CatchUpResult } from "../projections/projector.ts";
import type { AnalysisDb } from "./analysis-db.ts";
import { analysisPath } from "./analysis-path.ts";

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

/** Open projections: a raw DuckDB connection, a typed Kysely handle, and what catch-up did. */
export interface Analysis extends AsyncDisposable {
  readonly path: string;
  readonly conn: DuckDBConnection;
  readonly db: Kysely<AnalysisDb>;
  readonly caughtUp: CatchUpResult;
  close(): Promise<void>;
}

/**
 * Brings the projections of a store up to date, then opens them. With `readOnly` the DuckDB file
 * is reopened in READ_ONLY access mode after the catch-up, so nothing run on it can write.
 *
 * @example
 * ```ts
 * await using a = await openAnalysis(".polyrl/events.sqlite", { readOnly: true });
 * const runs = await a.db.selectFrom("runs").selectAll().execute();
 * ```
 */
export async function openAnalysis(
  storeTarget: string,
  options: { readonly readOnly?: boolean; readonly path?: string } = {},
): Promise<Analysis> {
  const path = options.path ?? analysisPath(storeTarget);
  const store = await openStore(storeTarget, { create: false });
  const folder = path.replace(/[^/]*$/, "");
  if (folder) await Deno.mkdir(folder, { recursive: true });
  let caughtUp: CatchUpResult;
  let instance = await openDuckDB(path);
  let conn = await instance.connect();
  try {
    caughtUp = await catchUp(conn, store);
  } catch (err) {
    conn.closeSync();
    instance.closeSync();
    throw err;
  } finally {
    await store.close();
  }
  if (options.readOnly) {
    conn.closeSync();
    instance.closeSync();
    instance = await openDuckDB(path, { access_mode: "READ_ONLY" });
    conn = await instance.connect();
  }
  const db = new Kysely<AnalysisDb>({ dialect: new DuckDBDialect({ instance }) });
  const close = async () => {
    await db.destroy();
    conn.closeSync();
    instance.closeSync();
  };
  return { path, conn, db, caughtUp, close, [Symbol.asyncDispose]: close };
}
