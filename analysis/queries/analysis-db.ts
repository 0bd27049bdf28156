import type { RowOf } from "../projections/define-table.ts";
import type { TABLES } from "../projections/tables.ts";

/**
 * The base tables' row types, derived from their declarations (analysis/projections/tables.ts):
 * a column is nullable where its reader may give null.
 */
type BaseTables = { [N in keyof typeof TABLES]: RowOf<(typeof TABLES)[N]> };

/**
 * Kysely types of the projection: every base table, and the views that TypeScript queries (the
 * rest is reachable with `sql`). Column names are the stable ones documented in
 * analysis/TABLES.md; BIGINT columns read as number through the dialect's checked conversion.
 */
export interface AnalysisDb extends BaseTables {
  runs: {
    run_id: string;
    estimator: string | null;
    workflow: string | null;
    seed: number;
    models: string | null;
    worker_groups: number;
    trainable_parameters: number | null;
    status: string;
    last_step: number | null;
    /** config `steps`, the steps asked for. */
    steps: number | null;
    /** Finished steps (all of a completed run; the one under way does not count). */
    steps_done: number | null;
    started_position: number;
    error: string | null;
    config_json: string;
    /** Attempts: 1, plus one per resume after a failure or an interruption. */
    attempts: number;
    /** Seconds the attempts took together (a running one counts up to now). */
    duration_s: number | null;
    /** The run's tags, sorted, comma-separated; NULL when it has none. */
    tags: string | null;
    hidden: boolean;
  };
  /** One row per attempt of a run: the first, and one per resume. */
  run_attempts: {
    run_id: string;
    attempt: number;
    /** completed, failed, running or interrupted (its writer died). */
    status: string;
    duration_s: number | null;
    events: number;
    first_position: number;
    last_position: number;
    failed_step: number | null;
    failed_stage: string | null;
    error: string | null;
    host: string | null;
    pid: number | null;
  };
  run_tags: { run_id: string; tag: string };
  turns: {
    run_id: string;
    step: number;
    phase: string;
    trajectory: string;
    prompt: number;
    sample: number;
    turn: number;
    agent: string;
    role: string | null;
    wg: string;
    tokens: number;
    parsed_answer: string | null;
    correct: boolean | null;
    round: number;
  };
  lemma_multipliers: {
    run_id: string;
    step: number;
    prompt: number;
    agent: string;
    /** As the engine recorded it; NULL where it recorded none. */
    multiplier: number | null;
    /** NULL under MADA-RL, where the lemma does not apply. */
    unbounded: boolean | null;
    agent_mu: number;
    agent_sigma: number;
    global_mu: number;
    global_sigma: number;
  };
  eval_summary: {
    run_id: string;
    step: number;
    benchmark: string;
    k: number;
    problems: number;
    avg_at_k: number;
    pass_at_k: number | null;
    /** The SHA-256 of the benchmark's problems; NULL for runs recorded before it was. */
    benchmark_sha256: string | null;
  };
}
