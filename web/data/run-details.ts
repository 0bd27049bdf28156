import { type Kysely, sql } from "kysely";
import type { AnalysisDb } from "../../analysis/mod.ts";

/** One evaluation of a run on one benchmark. */
export interface EvalRow {
  readonly step: number;
  readonly benchmark: string;
  readonly k: number;
  readonly problems: number;
  readonly avgAtK: number;
  readonly passAtK: number | null;
}

/** A worker group's loads and offloads within one step. */
export interface PlacementCell {
  readonly step: number;
  readonly wg: string;
  readonly loads: number;
  readonly offloads: number;
  readonly device: string;
  readonly bytes: number;
}

/**
 * Evaluations of a run, newest step first.
 *
 * @example
 * ```ts
 * (await runEvals(db, "run-1"))[0]; // { step: 9, benchmark: "math500", k: 16, avgAtK: 0.61, ... }
 * ```
 */
export async function runEvals(db: Kysely<AnalysisDb>, runId: string): Promise<EvalRow[]> {
  const { rows } = await sql<EvalRow>`
    SELECT step, benchmark, k, problems, avg_at_k AS "avgAtK", pass_at_k AS "passAtK"
    FROM eval_summary WHERE run_id = ${runId} ORDER BY step DESC, benchmark`.execute(db);
  return rows;
}

/**
 * Worker-group placements of the run's last `steps` steps, for the load/offload timeline.
 *
 * @example
 * ```ts
 * await recentPlacements(db, "run-1", 30); // [{ step: 99, wg: "wg0", loads: 1, offloads: 1, ... }]
 * ```
 */
export async function recentPlacements(
  db: Kysely<AnalysisDb>,
  runId: string,
  steps: number,
): Promise<PlacementCell[]> {
  const { rows } = await sql<PlacementCell>`
    SELECT step, wg, count(*) FILTER (action = 'load') AS loads,
      count(*) FILTER (action = 'offload') AS offloads, string_agg(DISTINCT device, ',') AS device,
      max(bytes) AS bytes
    FROM placements
    WHERE run_id = ${runId}
      AND step > (SELECT max(step) FROM placements WHERE run_id = ${runId}) - ${steps}
    GROUP BY step, wg ORDER BY step, wg`.execute(db);
  return rows;
}
