/**
 * What the study report needs of its runs, read from the analysis projections of the store (the
 * event log, projected): the report module's run summaries (accuracy as avg@k and as pass@k,
 * critic effects, cost), each agent's gradient norm and Lemma 4.2 multiplier per step, and each
 * run's recorded config, runtime, evaluated benchmarks and wall-clock span. Only runs that
 * completed are read.
 */
import { type Kysely, sql } from "kysely";
import { type AnalysisDb, loadRunSummaries, type RunSummary } from "../analysis/mod.ts";
import type { PlannedRun } from "./plan-runs.ts";

/** One agent's values over training steps (one per step; NaN where undefined). */
export interface AgentSeries {
  readonly agent: string;
  readonly steps: readonly number[];
  readonly values: readonly number[];
}

/** One evaluated benchmark of a run, by content, as `run.started` recorded it. */
export interface RunBenchmark {
  readonly problems: number;
  /** SHA-256 of the benchmark's problems (id, problem, answer, in order, canonical JSON). */
  readonly sha256: string;
}

/** One completed run of the study. */
export interface StudyRun {
  readonly runId: string;
  readonly cell: string;
  readonly seed: number;
  /** The config `run.started` recorded. */
  readonly config: Readonly<Record<string, unknown>>;
  /** The runtime `run.started` recorded (deno, onnxruntime, execution provider, threads ...). */
  readonly runtime: Readonly<Record<string, unknown>>;
  /** The code version (git commit) `run.started` recorded. */
  readonly codeVersion: string;
  /**
   * Each evaluated benchmark by the name its evaluations carry (the run_benchmarks projection);
   * empty for a run recorded before runs recorded them.
   */
  readonly benchmarks: Readonly<Record<string, RunBenchmark>>;
  /** The report module's summaries with avg@k and with pass@k as accuracy. */
  readonly avg: RunSummary;
  readonly pass: RunSummary;
  /** Gradient norm of each agent's part of its worker group's update, per step. */
  readonly gradNorms: readonly AgentSeries[];
  /** Lemma 4.2 multiplier per agent, mean over the step's prompt groups where it is finite. */
  readonly multipliers: readonly AgentSeries[];
  /**
   * Per agent, the prompt groups whose multiplier is unbounded: every trajectory earned the same
   * reward (global σ = 0) but the agent's action rewards differ from it (an invalid-action
   * penalty), so GRPO divides a nonzero difference by ε.
   */
  readonly unboundedMultipliers: Readonly<Record<string, number>>;
  /** Wall-clock seconds from `run.started` to `run.completed` (a resumed run includes its pause). */
  readonly seconds: number;
  /** Wall clock of `run.started` and `run.completed`, ms since the epoch. */
  readonly startedMs: number;
  readonly endedMs: number;
}

function series(rows: readonly { agent: string; step: number; value: number }[]): AgentSeries[] {
  const byAgent = new Map<string, { steps: number[]; values: number[] }>();
  for (const r of rows) {
    const s = byAgent.get(r.agent) ?? { steps: [], values: [] };
    s.steps.push(r.step);
    s.values.push(r.value);
    byAgent.set(r.agent, s);
  }
  return [...byAgent].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([agent, s]) => ({ agent, ...s }));
}

/** The recorded JSON of a per-agent float record: non-finite values are the strings "NaN" .... */
function floats(json: string): Record<string, number> {
  const raw = JSON.parse(json) as Record<string, number | string>;
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, Number(v)]));
}

/**
 * Reads the completed runs among `plan` from the projections, in plan order; runs not complete
 * in the store are left out (the report says how many of each cell it has).
 *
 * @example
 * ```ts
 * import { openAnalysis } from "../analysis/mod.ts";
 * import type { PlannedRun } from "./mod.ts";
 * declare const plan: readonly PlannedRun[];
 * await using a = await openAnalysis(".polyrl/study.sqlite");
 * const runs = await loadStudyRuns(a.db, plan);
 * ```
 */
export async function loadStudyRuns(
  db: Kysely<AnalysisDb>,
  plan: readonly PlannedRun[],
): Promise<StudyRun[]> {
  const planned = plan.map((r) => r.runId);
  if (planned.length === 0) return [];
  const complete = new Set(
    (await db.selectFrom("runs").select("run_id").where("run_id", "in", planned)
      .where("status", "=", "completed").execute()).map((r) => r.run_id),
  );
  const runs = plan.filter((r) => complete.has(r.runId));
  if (runs.length === 0) return [];
  const ids = runs.map((r) => r.runId);
  const avg = await loadRunSummaries(db, ids, "avg@k");
  const pass = await loadRunSummaries(db, ids, "pass@k");
  const started = await sql<{
    run_id: string;
    started_ms: number;
    ended_ms: number;
    runtime_json: string;
    config_json: string;
    code_version: string;
  }>`SELECT s.run_id, s.recorded_at_ms AS started_ms, max(e.recorded_at_ms) AS ended_ms,
        s.runtime_json, s.config_json, s.code_version
      FROM run_started s JOIN run_ended e ON e.run_id = s.run_id AND e.status = 'completed'
      WHERE s.run_id IN (${sql.join(ids)})
      GROUP BY s.run_id, s.recorded_at_ms, s.runtime_json, s.config_json, s.code_version`.execute(
    db,
  );
  const meta = new Map(started.rows.map((r) => [r.run_id, r]));
  const benchmarks = await db.selectFrom("run_benchmarks")
    .select(["run_id", "benchmark", "problems", "sha256"])
    .where("run_id", "in", ids).orderBy("run_id").orderBy("benchmark").execute();
  const norms = await db.selectFrom("grad_steps")
    .select(["run_id", "step", sql<string>`agent_grad_norms_json`.as("agent_grad_norms_json")])
    .where("run_id", "in", ids).orderBy("run_id").orderBy("step").orderBy("wg").orderBy("update")
    .execute();
  const lemma = await sql<{
    run_id: string;
    agent: string;
    step: number;
    m: number | null;
    unbounded: number;
  }>`SELECT run_id, agent, step, avg(multiplier) AS m,
        count(*) FILTER (WHERE unbounded) AS unbounded
      FROM lemma_multipliers WHERE run_id IN (${sql.join(ids)})
      GROUP BY run_id, agent, step ORDER BY run_id, agent, step`.execute(db).then((r) => r.rows);
  return runs.map((run, i) => {
    const m = meta.get(run.runId)!;
    return Object.freeze({
      runId: run.runId,
      cell: run.cell.id,
      seed: run.seed,
      config: JSON.parse(m.config_json),
      runtime: JSON.parse(m.runtime_json),
      codeVersion: m.code_version,
      benchmarks: Object.fromEntries(
        benchmarks.filter((b) => b.run_id === run.runId).map((b) => [
          b.benchmark,
          { problems: b.problems, sha256: b.sha256 },
        ]),
      ),
      avg: avg[i],
      pass: pass[i],
      gradNorms: series(
        norms.filter((n) => n.run_id === run.runId).flatMap((n) =>
          Object.entries(floats(n.agent_grad_norms_json)).map(([agent, value]) => ({
            agent,
            step: n.step,
            value,
          }))
        ),
      ),
      multipliers: series(
        lemma.filter((l) => l.run_id === run.runId).map((l) => ({
          agent: l.agent,
          step: l.step,
          // avg over a step's groups skips NULL (sigma = 0); a step of only such groups is NaN.
          value: l.m ?? NaN,
        })),
      ),
      unboundedMultipliers: Object.fromEntries(
        [...new Set(lemma.filter((l) => l.run_id === run.runId).map((l) => l.agent))].map((
          agent,
        ) => [
          agent,
          lemma.filter((l) => l.run_id === run.runId && l.agent === agent)
            .reduce((s, l) => s + Number(l.unbounded), 0),
        ]),
      ),
      seconds: (m.ended_ms - m.started_ms) / 1000,
      startedMs: m.started_ms,
      endedMs: m.ended_ms,
    });
  });
}
