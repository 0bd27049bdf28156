import { type Kysely, sql } from "kysely";
import type { AnalysisDb } from "../../analysis/mod.ts";

/** Which trajectories the browser shows: training rollouts or evaluations (validation, eval runs). */
export type TrajectoryPhase = "rollout" | "eval";

/** The phases of the browser, in the order its toggle lists them. */
export const TRAJECTORY_PHASES: readonly TrajectoryPhase[] = Object.freeze(["rollout", "eval"]);

/** One agent output in the trajectory browser. */
export interface TurnRow {
  readonly turn: number;
  readonly agent: string;
  readonly wg: string;
  readonly responseTokens: number;
  readonly finishReason: string;
  readonly parsedAnswer: string | null;
  readonly correct: boolean | null;
  readonly meanLogprob: number | null;
  /**
   * the turn's own reward as advantages.computed recorded it (after any invalid-action penalty;
   * not the agent's reward.assigned, which is the mean over its turns); null for evaluations,
   * which are not rewarded, and in logs before advantages.computed v3
   */
  readonly reward: number | null;
  readonly advantage: number | null;
  /** global log position of the turn.generated event */
  readonly position: number;
  /** the generated text (the turns view's `text`) */
  readonly text: string | null;
}

/** One trajectory with every turn of every agent (or of the agent filtered on). */
export interface TrajectoryRow {
  readonly step: number;
  readonly trajectory: string;
  readonly prompt: number;
  readonly sample: number;
  readonly problemId: string;
  /** the task's question as the workflow received it; null in runs from before it was recorded */
  readonly question: string | null;
  /** the task's reference answer; null when it has none or the run predates its recording */
  readonly gold: string | null;
  /** the benchmark an evaluation trajectory's problem belongs to; null for rollouts */
  readonly benchmark: string | null;
  readonly finalAnswer: string | null;
  readonly correct: boolean | null;
  readonly reward: number | null;
  readonly turns: TurnRow[];
}

/** Which trajectories of a step to show; an absent field does not filter. */
export interface TrajectoryFilter {
  /** the trajectory's final answer graded right (true) or not (false) */
  readonly correct?: boolean;
  /** trajectories in which this agent took a turn, showing that agent's turns only */
  readonly agent?: string;
  /** bounds on the trajectory's reward, inclusive; a trajectory without a reward is then left out */
  readonly minReward?: number;
  readonly maxReward?: number;
}

/** What to read: a phase, a step (absent: the last with trajectories), a page and a filter. */
export interface TrajectoryQuery {
  readonly phase: TrajectoryPhase;
  readonly step?: number;
  readonly page: number;
  readonly pageSize: number;
  readonly filter: TrajectoryFilter;
}

/** A page of trajectories. */
export interface TrajectoryPage {
  readonly kind: "trajectory-page";
  readonly phase: TrajectoryPhase;
  /** the step shown; null when the phase has no trajectories yet */
  readonly step: number | null;
  /** the step asked for when it has no trajectories of this phase (another one is shown) */
  readonly missingStep: number | null;
  /** every step with trajectories of this phase, ascending */
  readonly steps: readonly number[];
  /** the agents of the run, for the agent filter */
  readonly agents: readonly string[];
  readonly filter: TrajectoryFilter;
  readonly page: number;
  readonly pageSize: number;
  /** trajectories of this step that pass the filter */
  readonly total: number;
  readonly rows: readonly TrajectoryRow[];
}

/** The agent filter names an agent the run does not have: a 400 naming the run's agents. */
export class UnknownAgentError extends Error {
  override name = "UnknownAgentError";
  constructor(readonly agent: string, readonly agents: readonly string[]) {
    super(
      `no agent ${JSON.stringify(agent.slice(0, 40))} in this run; its agents are ` +
        (agents.length > 0 ? agents.join(", ") : "not recorded yet"),
    );
  }
}

/**
 * One page of a step's trajectories of one phase (rollouts, or evaluations: in-training
 * validation and eval runs) with their turns, texts, rewards and advantages, filtered by
 * correctness, agent and reward. Reading one step at a time keeps a page cheap however long the
 * run.
 *
 * @example
 * ```ts
 * import type { Analysis } from "../../analysis/mod.ts";
 * declare const analysis: Analysis;
 * const p = await trajectoryPage(analysis.db, "run-1", {
 *   phase: "eval", step: 3, page: 0, pageSize: 8, filter: { correct: false },
 * });
 * p.rows[0].turns.map((t) => [t.agent, t.parsedAnswer]);
 * ```
 */
export async function trajectoryPage(
  db: Kysely<AnalysisDb>,
  runId: string,
  query: TrajectoryQuery,
): Promise<TrajectoryPage> {
  const { phase, page, pageSize, filter } = query;
  const agents = (await sql<{ agent: string }>`
    SELECT DISTINCT agent FROM turns WHERE run_id = ${runId} ORDER BY agent`.execute(db))
    .rows.map((r) => r.agent);
  if (filter.agent !== undefined && !agents.includes(filter.agent)) {
    throw new UnknownAgentError(filter.agent, agents);
  }
  const steps = (await sql<{ step: number }>`
    SELECT DISTINCT step::INTEGER AS step FROM trajectories
    WHERE run_id = ${runId} AND phase = ${phase} ORDER BY step`.execute(db)).rows.map((r) =>
    r.step
  );
  const step = query.step !== undefined && steps.includes(query.step)
    ? query.step
    : steps.at(-1) ?? null;
  const missingStep = query.step !== undefined && query.step !== step ? query.step : null;
  const base = {
    kind: "trajectory-page" as const,
    ...{ phase, step, missingStep, steps, agents, filter, page },
  };
  if (step === null) return Object.freeze({ ...base, pageSize, total: 0, rows: [] });
  const where = sql`t.run_id = ${runId} AND t.phase = ${phase} AND t.step = ${step}
    ${filter.correct === undefined ? sql`` : sql`AND t.correct = ${filter.correct}`}
    ${filter.minReward === undefined ? sql`` : sql`AND r.total >= ${filter.minReward}`}
    ${filter.maxReward === undefined ? sql`` : sql`AND r.total <= ${filter.maxReward}`}
    ${
    filter.agent === undefined ? sql`` : sql`AND EXISTS (SELECT 1 FROM turns u
      WHERE u.run_id = t.run_id AND u.step = t.step AND u.phase = t.phase
        AND u.trajectory = t.trajectory AND u.agent = ${filter.agent})`
  }`;
  // A trajectory's own reward is its row with no agent; evaluations assign none.
  const from = sql`trajectories t LEFT JOIN rewards r ON r.run_id = t.run_id AND r.step = t.step
    AND r.phase = t.phase AND r.trajectory = t.trajectory AND r.agent IS NULL`;
  const [{ total }] = (await sql<{ total: number }>`
    SELECT count(*)::INTEGER AS total FROM ${from} WHERE ${where}`.execute(db)).rows;
  // A page past the last one is empty; no query is built for it (nor for its turns).
  const trajectories = page * pageSize >= total ? [] : (await sql<Omit<TrajectoryRow, "turns">>`
    SELECT t.step, t.trajectory, t.prompt, t.sample, t.problem_id AS "problemId", t.question,
      t.gold, (SELECT min(e.benchmark) FROM evals e WHERE e.run_id = t.run_id AND e.step = t.step
        AND t.phase = 'eval' AND e.problem_id = t.problem_id) AS benchmark,
      t.final_answer AS "finalAnswer", t.correct, r.total AS reward
    FROM ${from} WHERE ${where}
    ORDER BY t.prompt, t.sample LIMIT ${pageSize} OFFSET ${page * pageSize}`.execute(db)).rows;
  // A turn's reward and advantage are its row of advantages.computed, whose trajectories are all
  // rollouts: an evaluation's turns find none.
  const turns = trajectories.length === 0 ? [] : (await sql<TurnRow & { trajectory: string }>`
    WITH adv AS (
      SELECT trajectory, agent, turn, reward, advantage FROM advantage_rows
      WHERE run_id = ${runId} AND step = ${step}
    )
    SELECT u.trajectory, u.turn, u.agent, u.wg, u.response_tokens AS "responseTokens",
      u.finish_reason AS "finishReason", u.parsed_answer AS "parsedAnswer", u.correct,
      u.mean_logprob AS "meanLogprob", a.reward, a.advantage, u.position, u.text
    FROM turns u
    LEFT JOIN adv a ON a.trajectory = u.trajectory AND a.agent = u.agent AND a.turn = u.turn
    WHERE u.run_id = ${runId} AND u.phase = ${phase} AND u.step = ${step}
      AND u.trajectory IN (SELECT unnest(${trajectories.map((t) => t.trajectory)}::VARCHAR[]))
      ${filter.agent === undefined ? sql`` : sql`AND u.agent = ${filter.agent}`}
    ORDER BY u.trajectory, u.turn`.execute(db)).rows;
  const byTrajectory = Map.groupBy(turns, (t) => t.trajectory);
  return Object.freeze({
    ...base,
    pageSize,
    total,
    rows: trajectories.map((t) => ({
      ...t,
      turns: (byTrajectory.get(t.trajectory) ?? []).map(({ trajectory: _, ...turn }) => turn),
    })),
  });
}
