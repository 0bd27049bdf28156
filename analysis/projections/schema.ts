/**
 * The DuckDB read models projected from the event log: base tables (appended to, never updated)
 * and views over them with the stable column names users query. Documented in analysis/TABLES.md;
 * a change here that alters a column bumps SCHEMA_VERSION, which rebuilds existing projections.
 * One table is no projection of the log: `run_leases`, the store's writer leases, copied afresh
 * at every catch-up so that the runs view can tell a running run from an interrupted one.
 */
import { LEASE_TIMEOUT_MS } from "../../events/mod.ts";

/** Column types the appender writes. */
export type ColumnType = "VARCHAR" | "BIGINT" | "DOUBLE" | "BOOLEAN";

/** One base table: ordered columns, as the appender fills them. */
export interface TableSpec {
  readonly name: string;
  readonly columns: readonly (readonly [string, ColumnType])[];
}

/** Bumped whenever a table or view changes shape; a projection of another version is rebuilt. */
export const SCHEMA_VERSION = 14;

const table = (name: string, columns: TableSpec["columns"]): TableSpec =>
  Object.freeze({ name, columns });

/** Base tables, in creation order. Every row carries the run it belongs to. */
export const TABLES = Object.freeze({
  run_started: table("run_started", [
    ["run_id", "VARCHAR"],
    ["position", "BIGINT"],
    ["recorded_at_ms", "BIGINT"],
    ["seed", "BIGINT"],
    ["config_hash", "VARCHAR"],
    ["code_version", "VARCHAR"],
    ["execution_provider", "VARCHAR"],
    ["config_json", "VARCHAR"],
    ["runtime_json", "VARCHAR"],
  ]),
  // What each run evaluates on, by content (run.started's benchmarks; none in older runs).
  run_benchmarks: table("run_benchmarks", [
    ["run_id", "VARCHAR"],
    ["benchmark", "VARCHAR"],
    ["problems", "BIGINT"],
    ["sha256", "VARCHAR"],
  ]),
  run_config: table("run_config", [
    ["run_id", "VARCHAR"],
    ["key", "VARCHAR"],
    ["value", "VARCHAR"],
  ]),
  agent_roles: table("agent_roles", [
    ["run_id", "VARCHAR"],
    ["agent", "VARCHAR"],
    ["role", "VARCHAR"],
  ]),
  run_ended: table("run_ended", [
    ["run_id", "VARCHAR"],
    ["position", "BIGINT"],
    // The end event's version in the run's stream: the next attempt begins at version + 1.
    ["version", "BIGINT"],
    ["recorded_at_ms", "BIGINT"],
    ["status", "VARCHAR"],
    ["steps", "BIGINT"],
    ["metrics_json", "VARCHAR"],
    ["failed_step", "BIGINT"],
    ["failed_stage", "VARCHAR"],
    ["error", "VARCHAR"],
  ]),
  worker_groups: table("worker_groups", [
    ["run_id", "VARCHAR"],
    ["wg", "VARCHAR"],
    ["agents", "VARCHAR"],
    ["model", "VARCHAR"],
    ["source", "VARCHAR"],
    ["parameter_count", "BIGINT"],
    ["trainable_parameter_count", "BIGINT"],
    ["parameter_hash", "VARCHAR"],
  ]),
  placements: table("placements", [
    ["run_id", "VARCHAR"],
    ["step", "BIGINT"],
    ["wg", "VARCHAR"],
    ["seq", "BIGINT"],
    ["action", "VARCHAR"],
    ["device", "VARCHAR"],
    ["bytes", "BIGINT"],
  ]),
  steps: table("steps", [
    ["run_id", "VARCHAR"],
    ["step", "BIGINT"],
    ["group_size", "BIGINT"],
    ["prompts", "BIGINT"],
    ["position", "BIGINT"],
    ["recorded_at_ms", "BIGINT"],
  ]),
  step_prompts: table("step_prompts", [
    ["run_id", "VARCHAR"],
    ["step", "BIGINT"],
    ["prompt", "BIGINT"],
    ["problem_id", "VARCHAR"],
  ]),
  turn_events: table("turn_events", [
    ["run_id", "VARCHAR"],
    ["step", "BIGINT"],
    ["phase", "VARCHAR"],
    ["trajectory", "VARCHAR"],
    ["prompt", "BIGINT"],
    ["sample", "BIGINT"],
    ["turn", "BIGINT"],
    ["agent", "VARCHAR"],
    ["role", "VARCHAR"],
    ["wg", "VARCHAR"],
    ["prompt_tokens", "BIGINT"],
    ["response_tokens", "BIGINT"],
    ["finish_reason", "VARCHAR"],
    ["parsed_answer", "VARCHAR"],
    ["correct", "BOOLEAN"],
    ["mean_logprob", "DOUBLE"],
    ["position", "BIGINT"],
    ["text", "VARCHAR"],
  ]),
  trajectories: table("trajectories", [
    ["run_id", "VARCHAR"],
    ["step", "BIGINT"],
    ["phase", "VARCHAR"],
    ["trajectory", "VARCHAR"],
    ["prompt", "BIGINT"],
    ["sample", "BIGINT"],
    ["problem_id", "VARCHAR"],
    ["turns", "BIGINT"],
    ["agents", "VARCHAR"],
    ["final_answer", "VARCHAR"],
    ["correct", "BOOLEAN"],
    ["tokens", "BIGINT"],
    ["termination_reason", "VARCHAR"],
    // NULL in logs from before trajectory.completed v2, which did not record them.
    ["question", "VARCHAR"],
    ["gold", "VARCHAR"],
  ]),
  rewards: table("rewards", [
    ["run_id", "VARCHAR"],
    ["step", "BIGINT"],
    ["phase", "VARCHAR"],
    ["trajectory", "VARCHAR"],
    ["prompt", "BIGINT"],
    ["sample", "BIGINT"],
    ["agent", "VARCHAR"],
    ["total", "DOUBLE"],
    ["components_json", "VARCHAR"],
  ]),
  advantage_groups: table("advantage_groups", [
    ["run_id", "VARCHAR"],
    ["step", "BIGINT"],
    ["prompt", "BIGINT"],
    ["estimator", "VARCHAR"],
    // What the statistics ranged over: group, batch (the step's whole batch) or role (MADA-RL).
    ["scope", "VARCHAR"],
    ["sigma_convention", "VARCHAR"],
    ["eps", "DOUBLE"],
    // Batch-scope statistics (n = response tokens of the step's batch), equal on every prompt
    // group of the step; NULL for other scopes and logs before advantages.computed v3.
    ["batch_mu", "DOUBLE"],
    ["batch_sigma", "DOUBLE"],
    ["batch_n", "BIGINT"],
  ]),
  baselines: table("baselines", [
    ["run_id", "VARCHAR"],
    ["step", "BIGINT"],
    ["prompt", "BIGINT"],
    ["agent", "VARCHAR"],
    ["mu", "DOUBLE"],
    ["sigma", "DOUBLE"],
    ["n", "BIGINT"],
    // Lemma 4.2 multiplier as the engine recorded it (NULL on the global row).
    ["multiplier", "DOUBLE"],
  ]),
  advantage_rows: table("advantage_rows", [
    ["run_id", "VARCHAR"],
    ["step", "BIGINT"],
    ["prompt", "BIGINT"],
    ["trajectory", "VARCHAR"],
    ["sample", "BIGINT"],
    ["agent", "VARCHAR"],
    ["turn", "BIGINT"],
    ["advantage", "DOUBLE"],
    // The action's own reward (after penalty) and the value normalized (its reward or its
    // trajectory's score); NULL in logs before advantages.computed v3.
    ["reward", "DOUBLE"],
    ["score", "DOUBLE"],
  ]),
  grad_steps: table("grad_steps", [
    ["run_id", "VARCHAR"],
    ["step", "BIGINT"],
    ["wg", "VARCHAR"],
    ["update", "BIGINT"],
    // update = epoch * mini-batches + mini_batch; 0 and 0 in logs before gradient_step.applied v2.
    ["epoch", "BIGINT"],
    ["mini_batch", "BIGINT"],
    ["agents", "VARCHAR"],
    ["loss", "DOUBLE"],
    ["losses_json", "VARCHAR"],
    ["grad_norm", "DOUBLE"],
    ["grad_norm_after_clip", "DOUBLE"],
    ["agent_grad_norms_json", "VARCHAR"],
    ["clip_fraction", "DOUBLE"],
    ["kl", "DOUBLE"],
    ["entropy", "DOUBLE"],
    ["lr", "DOUBLE"],
    // NULL in logs before gradient_step.applied v2 (old_logprobs reads "rollout" there).
    ["clip_low", "DOUBLE"],
    ["clip_high", "DOUBLE"],
    ["temperature", "DOUBLE"],
    ["lora_dropout", "DOUBLE"],
    ["old_logprobs", "VARCHAR"],
    ["old_logprob_drift", "DOUBLE"],
    ["tokens", "BIGINT"],
    ["skipped_non_finite", "BOOLEAN"],
    ["parameter_hash", "VARCHAR"],
    // NULL where the run's loss has no dual clip (max_ratio, dual_clip_fraction) or no KL clamp.
    ["max_ratio", "DOUBLE"],
    ["dual_clip_fraction", "DOUBLE"],
    ["kl_clamp_fraction", "DOUBLE"],
  ]),
  // The turns each update trained on (none for logs before gradient_step.applied v2).
  grad_step_rows: table("grad_step_rows", [
    ["run_id", "VARCHAR"],
    ["step", "BIGINT"],
    ["wg", "VARCHAR"],
    ["update", "BIGINT"],
    ["epoch", "BIGINT"],
    ["mini_batch", "BIGINT"],
    ["prompt", "BIGINT"],
    ["sample", "BIGINT"],
    ["turn", "BIGINT"],
  ]),
  checkpoints: table("checkpoints", [
    ["run_id", "VARCHAR"],
    ["step", "BIGINT"],
    ["wg", "VARCHAR"],
    ["blob", "VARCHAR"],
    ["bytes", "BIGINT"],
    ["parameter_hash", "VARCHAR"],
    ["optimizer_blob", "VARCHAR"],
    ["format", "VARCHAR"],
  ]),
  evals: table("evals", [
    ["run_id", "VARCHAR"],
    ["step", "BIGINT"],
    ["benchmark", "VARCHAR"],
    ["problem_id", "VARCHAR"],
    ["n", "BIGINT"],
    ["c", "BIGINT"],
    ["samples_per_problem", "BIGINT"],
  ]),
  eval_metrics: table("eval_metrics", [
    ["run_id", "VARCHAR"],
    ["step", "BIGINT"],
    ["benchmark", "VARCHAR"],
    ["metric", "VARCHAR"],
    ["value", "DOUBLE"],
  ]),
  // Every event's place and time, of every stream: where a resumed run's attempts begin.
  log_events: table("log_events", [
    ["stream", "VARCHAR"],
    ["version", "BIGINT"],
    ["position", "BIGINT"],
    ["recorded_at_ms", "BIGINT"],
  ]),
  // Tags and hiding, from the annotations stream; action is tagged, untagged, hidden, unhidden.
  run_annotations: table("run_annotations", [
    ["run_id", "VARCHAR"],
    ["position", "BIGINT"],
    ["recorded_at_ms", "BIGINT"],
    ["action", "VARCHAR"],
    ["tag", "VARCHAR"],
  ]),
  // Not from the log: the store's writer leases, replaced at every catch-up. pid_alive is
  // whether the writer's process still exists, judged where the writer's host is this one
  // (NULL elsewhere, where only the heartbeat tells).
  run_leases: table("run_leases", [
    ["run_id", "VARCHAR"],
    ["host", "VARCHAR"],
    ["pid", "BIGINT"],
    ["started_at_ms", "BIGINT"],
    ["heartbeat_at_ms", "BIGINT"],
    ["ended_at_ms", "BIGINT"],
    ["pid_alive", "BOOLEAN"],
  ]),
});

/** Name of a base table. */
export type TableName = keyof typeof TABLES;

/**
 * The bookkeeping table: last projected global position, the schema it was built with, and what
 * it was built from (the store's id and the hash of the event at `position`), so a projection is
 * never continued on a store that is not the one it projected.
 */
export const STATE_DDL = `CREATE TABLE IF NOT EXISTS projection_state (
  name VARCHAR PRIMARY KEY, position BIGINT NOT NULL, schema_version BIGINT NOT NULL,
  store_id VARCHAR, position_hash VARCHAR)`;

/** `CREATE TABLE` for a base table. */
export function tableDdl(spec: TableSpec): string {
  return `CREATE TABLE ${spec.name} (${spec.columns.map(([c, t]) => `"${c}" ${t}`).join(", ")})`;
}

/**
 * Macros and views, in dependency order. pass_at_k is the unbiased estimator in its product form
 * (1 - prod_{i=n-c+1..n} (1 - k/i)), the same as analysis/stats/pass-at-k.ts.
 */
export const VIEWS: readonly (readonly [string, string])[] = Object.freeze([
  [
    "pass_at_k",
    `CREATE OR REPLACE MACRO pass_at_k(n, c, k) AS
      CASE WHEN n - c < k THEN 1.0
           WHEN c = 0 THEN 0.0
           ELSE 1.0 - list_product(list_transform(range(n - c + 1, n + 1), i -> 1.0 - k / i)) END`,
  ],
  [
    "config_lookup",
    // A config key by exact name, else the unique flattened key ending in ".name".
    `CREATE OR REPLACE VIEW config_lookup AS
      SELECT run_id, key, value, regexp_extract(key, '([^.]+)$', 1) AS leaf FROM run_config`,
  ],
  [
    "run_attempts",
    // Attempt n of a run spans its events after its (n-1)-th end event (run.failed; a resume
    // appends after it) up to its n-th. Events after the last end event, or a run with none
    // yet, make an attempt that has not ended: running while its writer's lease is held and its
    // process exists (on this host) or it was renewed within LEASE_TIMEOUT_MS (elsewhere),
    // interrupted once not, running when there is no lease (runs recorded before leases). An
    // interrupted attempt ends at its last sign of life. A writer killed outright writes no end
    // event, so a resume after a kill continues its attempt (the log of a resumed run is the
    // uninterrupted run's, event for event).
    `CREATE OR REPLACE VIEW run_attempts AS
      WITH heads AS (
        SELECT stream AS run_id, max(version) AS head_version, max(position) AS head_position,
          max(recorded_at_ms) AS head_ms
        FROM log_events GROUP BY stream),
      ends AS (
        SELECT run_id, position, version, recorded_at_ms, status, error, failed_step,
          failed_stage, row_number() OVER w AS attempt, coalesce(lag(version) OVER w, 0) AS after
        FROM run_ended WINDOW w AS (PARTITION BY run_id ORDER BY position)),
      last_end AS (
        SELECT run_id, max(version) AS version, count(*) AS n FROM run_ended GROUP BY run_id),
      spans AS (
        SELECT run_id, attempt, after + 1 AS first_version, version AS last_version,
          position AS end_position, recorded_at_ms AS ended_ms, status, error, failed_step,
          failed_stage
        FROM ends
        UNION ALL
        SELECT h.run_id, coalesce(e.n, 0) + 1, coalesce(e.version, 0) + 1, h.head_version, NULL,
          NULL, NULL, NULL, NULL, NULL
        FROM heads h JOIN run_started s USING (run_id) LEFT JOIN last_end e USING (run_id)
        WHERE h.head_version > coalesce(e.version, 0)),
      -- Each attempt's first event: where and when it began.
      firsts AS (
        SELECT l.stream AS run_id, l.version, l.position, l.recorded_at_ms
        FROM log_events l SEMI JOIN spans p ON l.stream = p.run_id AND l.version = p.first_version),
      judged AS (
        SELECT p.run_id, p.attempt, p.error, p.failed_step, p.failed_stage, p.end_position,
          f.position AS first_position,
          f.recorded_at_ms AS started_ms,
          coalesce(p.end_position, h.head_position) AS last_position,
          p.last_version - p.first_version + 1 AS events,
          p.ended_ms,
          CASE WHEN p.status IS NOT NULL THEN p.status
               WHEN k.run_id IS NULL THEN 'running'
               WHEN k.ended_at_ms IS NULL AND coalesce(k.pid_alive,
                 k.heartbeat_at_ms >= epoch_ms(now()) - ${LEASE_TIMEOUT_MS}) THEN 'running'
               ELSE 'interrupted' END AS state,
          greatest(h.head_ms, coalesce(k.ended_at_ms, k.heartbeat_at_ms)) AS alive_ms,
          k.host, k.pid
        FROM spans p
        JOIN firsts f ON f.run_id = p.run_id AND f.version = p.first_version
        JOIN heads h ON h.run_id = p.run_id
        LEFT JOIN run_leases k ON k.run_id = p.run_id)
      SELECT run_id, attempt, state AS status,
        to_timestamp(started_ms / 1000.0) AS started_at,
        to_timestamp(CASE WHEN state = 'interrupted' THEN alive_ms ELSE ended_ms END / 1000.0)
          AS ended_at,
        (coalesce(CASE WHEN state = 'interrupted' THEN alive_ms ELSE ended_ms END,
                  epoch_ms(now())) - started_ms) / 1000.0 AS duration_s,
        events, first_position, last_position, failed_step, failed_stage, error,
        CASE WHEN end_position IS NULL THEN host END AS host,
        CASE WHEN end_position IS NULL THEN pid END AS pid
      FROM judged`,
  ],
  [
    "run_tags",
    // A tag is on a run when its last tagged/untagged annotation tagged it.
    `CREATE OR REPLACE VIEW run_tags AS
      SELECT run_id, tag, to_timestamp(recorded_at_ms / 1000.0) AS tagged_at FROM (
        SELECT run_id, tag, action, recorded_at_ms,
          row_number() OVER (PARTITION BY run_id, tag ORDER BY position DESC) AS r
        FROM run_annotations WHERE action IN ('tagged', 'untagged'))
      WHERE r = 1 AND action = 'tagged'`,
  ],
  [
    "runs",
    // One row per run, resumed or not: the status, end and error of its last attempt, the
    // start of its first, the time its attempts took together.
    `CREATE OR REPLACE VIEW runs AS
      WITH leaf AS (
        SELECT run_id, leaf, min(value) AS value, count(*) AS k FROM config_lookup
        GROUP BY run_id, leaf),
      pick AS (
        SELECT s.run_id,
          coalesce((SELECT value FROM run_config c WHERE c.run_id = s.run_id
                      AND c.key IN ('estimator', 'estimator.kind')),
                   (SELECT value FROM leaf l WHERE l.run_id = s.run_id AND l.leaf = 'estimator' AND l.k = 1),
                   (SELECT min(estimator) FROM advantage_groups a WHERE a.run_id = s.run_id)) AS estimator,
          coalesce((SELECT value FROM run_config c WHERE c.run_id = s.run_id
                      AND c.key IN ('workflow', 'workflow.kind')),
                   (SELECT value FROM leaf l WHERE l.run_id = s.run_id AND l.leaf = 'workflow' AND l.k = 1))
            AS workflow,
          (SELECT max(step) FROM steps t WHERE t.run_id = s.run_id) AS last_step,
          (SELECT TRY_CAST(value AS BIGINT) FROM run_config c WHERE c.run_id = s.run_id
            AND c.key = 'steps') AS steps
        FROM run_started s),
      att AS (
        SELECT run_id, count(*) AS attempts, sum(duration_s) AS duration_s,
          arg_max({'status': status, 'ended_at': ended_at, 'error': error,
                   'failed_step': failed_step}, attempt) AS last
        FROM run_attempts GROUP BY run_id),
      hid AS (
        SELECT run_id, arg_max(action, position) = 'hidden' AS hidden FROM run_annotations
        WHERE action IN ('hidden', 'unhidden') GROUP BY run_id)
      SELECT s.run_id, p.estimator, p.workflow, s.seed,
        (SELECT string_agg(DISTINCT model, ',' ORDER BY model) FROM worker_groups w
          WHERE w.run_id = s.run_id) AS models,
        (SELECT count(*) FROM worker_groups w WHERE w.run_id = s.run_id) AS worker_groups,
        (SELECT sum(trainable_parameter_count) FROM worker_groups w WHERE w.run_id = s.run_id)
          AS trainable_parameters,
        coalesce(a.last.status, 'running') AS status,
        p.last_step, p.steps,
        -- Finished steps: all of a completed run; else those before the step it stopped in
        -- (run.failed's step) or, running or gone without a word, before the last one started.
        CASE WHEN a.last.status = 'completed' THEN coalesce(p.steps, p.last_step + 1, 0)
             ELSE coalesce(a.last.failed_step, p.last_step, 0) END AS steps_done,
        s.code_version, s.config_hash, s.execution_provider, s.position AS started_position,
        to_timestamp(s.recorded_at_ms / 1000.0) AS started_at,
        a.last.ended_at AS ended_at, a.last.error AS error, s.config_json,
        coalesce(a.attempts, 1) AS attempts, a.duration_s,
        (SELECT string_agg(tag, ',' ORDER BY tag) FROM run_tags g WHERE g.run_id = s.run_id)
          AS tags,
        coalesce(h.hidden, false) AS hidden
      FROM run_started s JOIN pick p USING (run_id) LEFT JOIN att a USING (run_id)
        LEFT JOIN hid h USING (run_id)`,
  ],
  [
    "turns",
    // Round: how many earlier turns the same agent had in the trajectory, plus one for critics,
    // so N generators answer in round 0 and critic C_i's r-th answer is round r (MADA-RL).
    // role and correct: as the engine recorded them (turn.generated v2). Logs from before v2
    // recorded neither: role then comes from the run's config, and correct from the trajectory's
    // grading for turns whose answer equals its final answer (an unparsed answer is wrong; any
    // other answer is NULL).
    `CREATE OR REPLACE VIEW turns AS
      SELECT t.run_id, t.step, t.phase, t.trajectory, t.prompt, t.sample, t.turn, t.agent,
        coalesce(t.role, r.role) AS role, t.wg, t.prompt_tokens, t.response_tokens,
        t.prompt_tokens + t.response_tokens AS tokens, t.finish_reason, t.parsed_answer,
        CASE WHEN t.correct IS NOT NULL THEN t.correct
             WHEN t.parsed_answer IS NULL THEN false
             WHEN t.parsed_answer = j.final_answer THEN j.correct END AS correct,
        (row_number() OVER (PARTITION BY t.run_id, t.step, t.phase, t.trajectory, t.agent
                            ORDER BY t.turn) - 1
          + CASE WHEN coalesce(t.role, r.role) = 'critic' THEN 1 ELSE 0 END) AS round,
        t.mean_logprob, t.position, t.text
      FROM turn_events t
      LEFT JOIN agent_roles r USING (run_id, agent)
      LEFT JOIN trajectories j USING (run_id, step, phase, trajectory)`,
  ],
  [
    "debate_rounds",
    `CREATE OR REPLACE VIEW debate_rounds AS
      SELECT run_id, step, phase, trajectory, prompt, sample, round,
        string_agg(agent, ',' ORDER BY turn) AS agents, count(*) AS answers,
        count(parsed_answer) AS parsed, count(*) FILTER (WHERE correct) AS correct,
        avg(CASE WHEN correct THEN 1.0 WHEN correct IS NULL THEN NULL ELSE 0.0 END) AS accuracy,
        sum(tokens) AS tokens
      FROM turns GROUP BY ALL`,
  ],
  [
    "advantages",
    `CREATE OR REPLACE VIEW advantages AS
      SELECT a.run_id, a.step, a.prompt, a.trajectory, a.sample, a.agent, a.turn, a.advantage,
        a.reward, a.score, g.estimator, g.scope, g.sigma_convention, g.eps,
        gb.mu AS global_mu, gb.sigma AS global_sigma, gb.n AS global_n,
        ab.mu AS agent_mu, ab.sigma AS agent_sigma, ab.n AS agent_n,
        g.batch_mu, g.batch_sigma, g.batch_n
      FROM advantage_rows a
      JOIN advantage_groups g USING (run_id, step, prompt)
      LEFT JOIN baselines gb ON gb.run_id = a.run_id AND gb.step = a.step
        AND gb.prompt = a.prompt AND gb.agent IS NULL
      LEFT JOIN baselines ab ON ab.run_id = a.run_id AND ab.step = a.step
        AND ab.prompt = a.prompt AND ab.agent = a.agent`,
  ],
  [
    "lemma_multipliers",
    // Dr. MAS Lemma 4.2 per prompt group and agent: the multiplier the engine recorded (its one
    // definition is engine/advantages; NULL where it recorded none: global sigma = 0, MADA-RL,
    // logs before advantages.computed v2). Unbounded: global sigma = 0 while agent k's rewards
    // differ from the group's, so a global baseline divides a nonzero difference by eps; NULL
    // under MADA-RL (estimator mada or scope role), where the lemma does not apply.
    `CREATE OR REPLACE VIEW lemma_multipliers AS
      SELECT ab.run_id, ab.step, ab.prompt, ab.agent, ab.multiplier,
        CASE WHEN g.estimator = 'mada' OR g.scope = 'role' THEN NULL
             ELSE gb.sigma = 0 AND (ab.sigma > 0 OR abs(ab.mu - gb.mu) > 1e-12) END AS unbounded,
        ab.mu AS agent_mu, ab.sigma AS agent_sigma, gb.mu AS global_mu, gb.sigma AS global_sigma
      FROM baselines ab JOIN baselines gb ON gb.run_id = ab.run_id AND gb.step = ab.step
        AND gb.prompt = ab.prompt AND gb.agent IS NULL
      LEFT JOIN advantage_groups g ON g.run_id = ab.run_id AND g.step = ab.step
        AND g.prompt = ab.prompt
      WHERE ab.agent IS NOT NULL`,
  ],
  [
    "eval_summary",
    `CREATE OR REPLACE VIEW eval_summary AS
      SELECT e.*, b.sha256 AS benchmark_sha256
      FROM (SELECT run_id, step, benchmark, any_value(samples_per_problem) AS k,
          count(*) AS problems, avg(c / n) AS avg_at_k,
          avg(pass_at_k(n, c, samples_per_problem)) FILTER (WHERE n >= samples_per_problem)
            AS pass_at_k
        FROM evals WHERE n > 0 GROUP BY run_id, step, benchmark) e
      LEFT JOIN run_benchmarks b USING (run_id, benchmark)`,
  ],
]);

/** What `export` writes and TABLES.md documents: the user-facing tables and views. */
export const EXPORTED = Object.freeze([
  "runs",
  "run_attempts",
  "run_tags",
  "run_config",
  "worker_groups",
  "steps",
  "turns",
  "trajectories",
  "rewards",
  "advantage_groups",
  "advantages",
  "lemma_multipliers",
  "grad_steps",
  "grad_step_rows",
  "checkpoints",
  "evals",
  "eval_summary",
  "eval_metrics",
  "run_benchmarks",
  "debate_rounds",
]);
