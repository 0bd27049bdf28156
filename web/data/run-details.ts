import { type Kysely, sql } from "kysely";
import type { AnalysisDb } from "../../analysis/mod.ts";
import { INTERRUPTED_STAGE } from "../../events/mod.ts";

/** One evaluation of a run on one benchmark. */
export interface EvalRow {
  readonly step: number;
  readonly benchmark: string;
  readonly k: number;
  readonly problems: number;
  readonly avgAtK: number;
  readonly passAtK: number | null;
}

/**
 * Where a worker group was in one step: its loads and offloads in the step, and whether it was
 * on the device at the step's end. The trainer records moves only: without `offload_idle` a group
 * is loaded once, at step 0, and stays on the device in every later step.
 */
export interface PlacementCell {
  readonly step: number;
  readonly wg: string;
  /** moves within this step */
  readonly loads: number;
  readonly offloads: number;
  /** the step of the group's last move at or before this one; null before its first */
  readonly lastMoveStep: number | null;
  /** on the device at the step's end: its last move so far was a load */
  readonly onDevice: boolean;
  /** the device and size of the group's last move; null before its first */
  readonly device: string | null;
  readonly bytes: number | null;
}

/** What an evaluation run evaluated, as `deno task eval` recorded it in its config. */
export interface EvalProtocol {
  /** "single", "debate", "refine", ... */
  readonly protocol: string;
  /** the checkpoint or model evaluated: `RUN@STEP/WG` for a run's checkpoint, else the model */
  readonly model: string;
  /** the run whose checkpoint was evaluated, when it was one */
  readonly run: string | null;
  readonly step: number | null;
  readonly benchmarks: readonly string[];
  /** samples per problem (the k of avg@k and pass@k) */
  readonly k: number | null;
}

/** One attempt of a run (a resumed run has several): when it ran and how it ended. */
export interface RunAttempt {
  readonly attempt: number;
  /** completed, failed, or for the last attempt running or interrupted */
  readonly status: string;
  readonly startedAt: string | null;
  /** null while it runs */
  readonly endedAt: string | null;
  readonly failedStep: number | null;
  readonly failedStage: string | null;
  readonly error: string | null;
}

/** What the Run page says about a run beyond its row in the runs list. */
export interface RunFacts {
  /** evaluation runs are made by `deno task eval`: they have a protocol and no training steps */
  readonly protocol: EvalProtocol | null;
  /** the failure of the run's last attempt, when it failed */
  readonly failure: RunAttempt | null;
  /** the run's last attempt, when Ctrl-C stopped it (its writer's death records nothing) */
  readonly interruption: RunAttempt | null;
  /** every attempt in order (the runs projection's run_attempts); one for a run never resumed */
  readonly attempts: readonly RunAttempt[];
}

/**
 * The protocol, failure and attempts of one run.
 *
 * @example
 * ```ts
 * import type { Analysis } from "../../analysis/mod.ts";
 * declare const analysis: Analysis;
 * const facts = await runFacts(analysis.db, "ev-seed0");
 * facts.protocol; // { protocol: "single", model: "run-1@9/wg0", run: "run-1", step: 9, k: 16, ... }
 * ```
 */
export async function runFacts(db: Kysely<AnalysisDb>, runId: string): Promise<RunFacts> {
  const utc = (column: string) =>
    sql.raw(`strftime(${column} AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S')`);
  const { rows: attempts } = await sql<RunAttempt>`
    SELECT attempt::INTEGER AS attempt, status, ${utc("started_at")} AS "startedAt",
      ${utc("ended_at")} AS "endedAt", failed_step AS "failedStep",
      failed_stage AS "failedStage", error
    FROM run_attempts WHERE run_id = ${runId} ORDER BY attempt`.execute(db);
  const { rows: [eval_] } = await sql<{
    protocol: string | null;
    model: string | null;
    run: string | null;
    step: number | null;
    benchmarks: string[] | null;
    k: number | null;
  }>`
    SELECT json_extract_string(s.config_json, '$.eval.protocol') AS protocol,
      coalesce(json_extract_string(s.config_json, '$.eval.model.label'),
        json_extract_string(s.config_json, '$.eval.model.model')) AS model,
      json_extract_string(s.config_json, '$.eval.model.run') AS run,
      json_extract(s.config_json, '$.eval.model.step')::INTEGER AS step,
      (SELECT list(DISTINCT benchmark ORDER BY benchmark) FROM eval_summary e
        WHERE e.run_id = s.run_id) AS benchmarks,
      (SELECT max(k) FROM eval_summary e WHERE e.run_id = s.run_id)::INTEGER AS k
    FROM run_started s WHERE s.run_id = ${runId}`.execute(db);
  const last = attempts.at(-1);
  return {
    protocol: eval_?.protocol
      ? {
        protocol: eval_.protocol,
        model: eval_.model ?? "unknown model",
        run: eval_.run,
        step: eval_.step,
        benchmarks: eval_.benchmarks ?? [],
        k: eval_.k,
      }
      : null,
    failure: last?.status === "failed" ? last : null,
    interruption: last?.failedStage === INTERRUPTED_STAGE ? last : null,
    attempts,
  };
}

/**
 * Evaluations of a run, newest step first.
 *
 * @example
 * ```ts
 * import type { Analysis } from "../../analysis/mod.ts";
 * declare const analysis: Analysis;
 * (await runEvals(analysis.db, "run-1"))[0]; // { step: 9, benchmark: "math500", k: 16, avgAtK: 0.61, ... }
 * ```
 */
export async function runEvals(db: Kysely<AnalysisDb>, runId: string): Promise<EvalRow[]> {
  const { rows } = await sql<EvalRow>`
    SELECT step, benchmark, k, problems, avg_at_k AS "avgAtK", pass_at_k AS "passAtK"
    FROM eval_summary WHERE run_id = ${runId} ORDER BY step DESC, benchmark`.execute(db);
  return rows;
}

/**
 * Every worker group's placement in each of the run's last `steps` steps (the steps it started,
 * with or without a move), for the load/offload timeline: a step without a move carries the state
 * of the group's last move before it.
 *
 * @example
 * ```ts
 * import type { Analysis } from "../../analysis/mod.ts";
 * declare const analysis: Analysis;
 * await recentPlacements(analysis.db, "run-1", 30);
 * // [{ step: 0, wg: "wg0", loads: 1, offloads: 0, lastMoveStep: 0, onDevice: true, ... },
 * //  { step: 1, wg: "wg0", loads: 0, offloads: 0, lastMoveStep: 0, onDevice: true, ... }, ...]
 * ```
 */
export async function recentPlacements(
  db: Kysely<AnalysisDb>,
  runId: string,
  steps: number,
): Promise<PlacementCell[]> {
  const { rows } = await sql<PlacementCell>`
    WITH moves AS (
      SELECT step, wg, count(*) FILTER (action = 'load') AS loads,
        count(*) FILTER (action = 'offload') AS offloads, arg_max(action, seq) AS last_action,
        arg_max(device, seq) AS device, arg_max(bytes, seq) AS bytes
      FROM placements WHERE run_id = ${runId} GROUP BY step, wg
    ),
    shown AS (
      SELECT step FROM (SELECT step FROM steps WHERE run_id = ${runId} UNION SELECT step FROM moves)
      ORDER BY step DESC LIMIT ${steps}
    ),
    cells AS (SELECT s.step, w.wg FROM shown s CROSS JOIN (SELECT DISTINCT wg FROM moves) w)
    SELECT c.step, c.wg,
      CASE WHEN m.step = c.step THEN m.loads ELSE 0 END AS loads,
      CASE WHEN m.step = c.step THEN m.offloads ELSE 0 END AS offloads,
      m.step AS "lastMoveStep", coalesce(m.last_action = 'load', false) AS "onDevice",
      m.device, m.bytes
    FROM cells c ASOF LEFT JOIN moves m ON m.wg = c.wg AND c.step >= m.step
    ORDER BY c.step, c.wg`.execute(db);
  return rows;
}
