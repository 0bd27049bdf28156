import { type Kysely, sql } from "kysely";
import type { AnalysisDb } from "../../analysis/mod.ts";

/** One line of the Runs page: one per run, a resumed run included. */
export interface RunRow {
  readonly runId: string;
  /** running, completed, failed or interrupted (its writer died; `train --resume` continues it) */
  readonly status: string;
  readonly workflow: string | null;
  readonly estimator: string | null;
  readonly agents: string | null;
  readonly models: string | null;
  readonly seed: number | null;
  /** finished steps (a running run's step under way is not one) */
  readonly stepsDone: number;
  /** the steps the run was asked for (config `steps`); null where its config has none */
  readonly steps: number | null;
  /** the last step started, numbered from 0; null before the first */
  readonly lastStep: number | null;
  /** mean over benchmarks at the latest evaluated step; null before the first evaluation */
  readonly avgAtK: number | null;
  readonly passAtK: number | null;
  /** samples per problem of that evaluation (16 for avg@16/pass@16) */
  readonly k: number | null;
  readonly startedAt: string | null;
  readonly endedAt: string | null;
  /** 1, plus one per resume */
  readonly attempts: number;
  /** seconds the attempts took together (a running one counts up to the read) */
  readonly durationS: number | null;
  /** sorted */
  readonly tags: readonly string[];
  /** hidden by `deno task runs hide`: listed only when hidden runs are asked for */
  readonly hidden: boolean;
}

/**
 * Every run in the projections (or only run `only`), newest first, with its latest evaluation,
 * hidden runs included (marked `hidden`).
 *
 * @example
 * ```ts
 * import type { Analysis } from "../../analysis/mod.ts";
 * declare const analysis: Analysis;
 * const runs = await listRuns(analysis.db); // [{ runId: "run-2", status: "running", ... }]
 * ```
 */
export async function listRuns(db: Kysely<AnalysisDb>, only?: string): Promise<RunRow[]> {
  // One run's page reads only that run's evaluations.
  const runFilter = only === undefined ? sql`TRUE` : sql`run_id = ${only}`;
  const { rows } = await sql<{
    run_id: string;
    status: string;
    workflow: string | null;
    estimator: string | null;
    agents: string | null;
    models: string | null;
    seed: number | null;
    last_step: number | null;
    steps: number | null;
    steps_done: number;
    avg_at_k: number | null;
    pass_at_k: number | null;
    k: number | null;
    started_at: string | null;
    ended_at: string | null;
    attempts: number;
    duration_s: number | null;
    tags: string | null;
    hidden: boolean;
  }>`
    WITH latest AS (
      SELECT run_id, avg(avg_at_k) AS avg_at_k, avg(pass_at_k) AS pass_at_k, max(k) AS k
      FROM eval_summary e
      WHERE ${runFilter}
        AND step = (SELECT max(step) FROM eval_summary m WHERE m.run_id = e.run_id)
      GROUP BY run_id
    ), agents AS (
      SELECT run_id, string_agg(agents, ', ' ORDER BY wg) AS agents FROM worker_groups
      WHERE ${runFilter} GROUP BY run_id
    )
    SELECT r.run_id, r.status, r.workflow, r.estimator, a.agents, r.models, r.seed, r.last_step,
      r.steps, r.steps_done,
      l.avg_at_k, l.pass_at_k, l.k,
      strftime(r.started_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S') AS started_at,
      strftime(r.ended_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S') AS ended_at,
      r.attempts, r.duration_s, r.tags, r.hidden
    FROM runs r LEFT JOIN latest l USING (run_id) LEFT JOIN agents a USING (run_id)
    WHERE ${only === undefined ? sql`TRUE` : sql`r.run_id = ${only}`}
    ORDER BY r.started_position DESC
  `.execute(db);
  return rows.map((r) =>
    Object.freeze({
      runId: r.run_id,
      status: r.status,
      workflow: r.workflow,
      estimator: r.estimator,
      agents: r.agents,
      models: r.models,
      seed: r.seed,
      stepsDone: r.steps_done,
      steps: r.steps,
      lastStep: r.last_step,
      avgAtK: r.avg_at_k,
      passAtK: r.pass_at_k,
      k: r.k,
      startedAt: r.started_at,
      endedAt: r.ended_at,
      attempts: r.attempts,
      durationS: r.duration_s,
      tags: Object.freeze(r.tags === null ? [] : r.tags.split(",")),
      hidden: r.hidden,
    })
  );
}
