/**
 * The DuckDB read models projected from the event log: base tables (declared in tables.ts,
 * appended to, never updated) and views over them with the stable column names users query.
 * Documented in analysis/TABLES.md. The schema version is a hash of it all, so any change to a
 * table's declaration or a view rebuilds existing projections. One table is no projection of the
 * log: `run_leases`, the store's writer leases, copied afresh at every catch-up so that the runs
 * view can tell a running run from an interrupted one.
 */
import { LEASE_TIMEOUT_MS, sha256Hex } from "../../events/mod.ts";
import type { AnyTable } from "./tables.ts";
import { TABLES } from "./tables.ts";

export { type TableName, TABLES } from "./tables.ts";

/**
 * The bookkeeping table: last projected global position, the schema it was built with, and what
 * it was built from (the store's id and the hash of the event at `position`), so a projection is
 * never continued on a store that is not the one it projected.
 */
export const STATE_DDL = `CREATE TABLE IF NOT EXISTS projection_state (
  name VARCHAR PRIMARY KEY, position BIGINT NOT NULL, schema_version BIGINT NOT NULL,
  store_id VARCHAR, position_hash VARCHAR)`;

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

/** A function's code without whitespace. */
const code = (f: (row: never) => unknown) => String(f).replace(/\s+/g, "");

/**
 * What a projection of this code is built from, as text: each table's name, columns (name, type
 * and the code of its reader) and row sources, the views and the bookkeeping table. A reader's
 * code is in it so that a change to what a column holds rebuilds projections as a change of shape
 * does; a helper a reader calls (floatsJson) is not. Code is taken without its whitespace, which
 * follows where the function sits in its file.
 */
export function schemaText(
  tables: readonly AnyTable[],
  views: readonly (readonly [string, string])[],
): string {
  return JSON.stringify({
    state: STATE_DDL,
    tables: tables.map((t) => ({
      name: t.name,
      columns: t.columnList.map(([name, c]) => [name, c.type, code(c.value)]),
      rows: "rows" in t ? code(t.rows) : null,
      events: "events" in t ? t.events : null,
    })),
    views,
  });
}

/**
 * The projection's schema version: the first 48 bits of the SHA-256 of `schemaText`, a number so
 * that `projection_state.schema_version` keeps its BIGINT. A projection built by any other
 * version (an older integer included) is rebuilt.
 */
export function schemaVersion(
  tables: readonly AnyTable[],
  views: readonly (readonly [string, string])[],
): number {
  return parseInt(sha256Hex(schemaText(tables, views)).slice(0, 12), 16);
}

/** This code's schema version. */
export const SCHEMA_VERSION = schemaVersion(Object.values(TABLES), VIEWS);
