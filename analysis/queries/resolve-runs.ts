import type { Kysely } from "kysely";
import type { AnalysisDb } from "./analysis-db.ts";

/** A run argument that names no run in the projections. */
export class UnknownRunError extends Error {
  override name = "UnknownRunError";
  constructor(readonly run: string, readonly known: readonly string[]) {
    super(
      known.length === 0
        ? `no run ${run}: the store has no runs yet`
        : `no run ${run}; known runs (newest first): ${known.slice(0, 10).join(", ")}${
          known.length > 10 ? ", ..." : ""
        }`,
    );
  }
}

/**
 * Resolves run arguments to run ids: an id, or `latest` for the most recently started run.
 * Order is kept and duplicates dropped.
 *
 * @example
 * ```ts
 * import type { Kysely } from "kysely";
 * import type { AnalysisDb } from "./analysis-db.ts";
 * import { resolveRuns } from "./resolve-runs.ts";
 * declare const db: Kysely<AnalysisDb>;
 *
 * await resolveRuns(db, ["latest"]); // ["run-7"]
 * ```
 */
export async function resolveRuns(
  db: Kysely<AnalysisDb>,
  args: readonly string[],
): Promise<string[]> {
  const known = (await db.selectFrom("runs").select("run_id").orderBy("started_position", "desc")
    .execute()).map((r) => r.run_id);
  const out: string[] = [];
  for (const arg of args) {
    const id = arg === "latest" ? known[0] : arg;
    if (id === undefined || !known.includes(id)) throw new UnknownRunError(arg, known);
    if (!out.includes(id)) out.push(id);
  }
  return out;
}
