import { type Kysely, sql } from "kysely";
import type { AnalysisDb } from "../../analysis/mod.ts";
import type { EventStore, NewEvent } from "../../events/mod.ts";
import { turnTexts } from "./turn-texts.ts";

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
  /** the agent's own reward in this trajectory, when one was assigned */
  readonly reward: number | null;
  readonly advantage: number | null;
  /** global log position of the turn.generated event */
  readonly position: number;
  /** the generated text, read from the store; null when not read */
  readonly text: string | null;
}

/** One trajectory with every turn of every agent. */
export interface TrajectoryRow {
  readonly step: number;
  readonly trajectory: string;
  readonly prompt: number;
  readonly sample: number;
  readonly problemId: string;
  readonly finalAnswer: string | null;
  readonly correct: boolean | null;
  readonly reward: number | null;
  readonly turns: TurnRow[];
}

/** A page of trajectories. */
export interface TrajectoryPage {
  readonly kind: "trajectory-page";
  readonly step: number;
  readonly page: number;
  readonly pageSize: number;
  /** trajectories in this step */
  readonly total: number;
  readonly rows: readonly TrajectoryRow[];
}

/**
 * One page of a step's rollout trajectories with their turns, rewards and advantages, and with
 * `store` the turns' texts. Reading one step at a time keeps a page cheap however long the run.
 *
 * @example
 * ```ts
 * const p = await trajectoryPage(db, "run-1", { step: 3, page: 0, pageSize: 8 });
 * p.rows[0].turns.map((t) => [t.agent, t.advantage]);
 * ```
 */
export async function trajectoryPage(
  db: Kysely<AnalysisDb>,
  runId: string,
  at: { readonly step: number; readonly page: number; readonly pageSize: number },
  store?: EventStore<NewEvent>,
): Promise<TrajectoryPage> {
  const { step, page, pageSize } = at;
  const [{ total }] = (await sql<{ total: number }>`
    SELECT count(*) AS total FROM trajectories
    WHERE run_id = ${runId} AND phase = 'rollout' AND step = ${step}`.execute(db)).rows;
  // A page past the last one is empty; no query is built for it (nor for its turns).
  const trajectories = page * pageSize >= total ? [] : (await sql<Omit<TrajectoryRow, "turns">>`
    SELECT t.step, t.trajectory, t.prompt, t.sample, t.problem_id AS "problemId",
      t.final_answer AS "finalAnswer", t.correct, r.total AS reward
    FROM trajectories t LEFT JOIN rewards r ON r.run_id = t.run_id AND r.step = t.step
      AND r.phase = t.phase AND r.trajectory = t.trajectory AND r.agent IS NULL
    WHERE t.run_id = ${runId} AND t.phase = 'rollout' AND t.step = ${step}
    ORDER BY t.prompt, t.sample LIMIT ${pageSize} OFFSET ${page * pageSize}`.execute(db)).rows;
  const turns = trajectories.length === 0 ? [] : (await sql<
    Omit<TurnRow, "text"> & { trajectory: string }
  >`
    WITH adv AS (
      SELECT trajectory, agent, turn, advantage FROM advantages
      WHERE run_id = ${runId} AND step = ${step}
    )
    SELECT u.trajectory, u.turn, u.agent, u.wg, u.response_tokens AS "responseTokens",
      u.finish_reason AS "finishReason", u.parsed_answer AS "parsedAnswer", u.correct,
      u.mean_logprob AS "meanLogprob", r.total AS reward, a.advantage, u.position
    FROM turns u
    LEFT JOIN rewards r ON r.run_id = u.run_id AND r.step = u.step AND r.phase = u.phase
      AND r.trajectory = u.trajectory AND r.agent = u.agent
    LEFT JOIN adv a ON a.trajectory = u.trajectory AND a.agent = u.agent AND a.turn = u.turn
    WHERE u.run_id = ${runId} AND u.phase = 'rollout' AND u.step = ${step}
      AND u.trajectory IN (SELECT unnest(${trajectories.map((t) => t.trajectory)}::VARCHAR[]))
    ORDER BY u.trajectory, u.turn`.execute(db)).rows;
  const byTrajectory = Map.groupBy(turns, (t) => t.trajectory);
  const texts = store ? await turnTexts(store, turns.map((t) => t.position)) : new Map();
  return Object.freeze({
    kind: "trajectory-page",
    step,
    page,
    pageSize,
    total,
    rows: trajectories.map((t) => ({
      ...t,
      turns: (byTrajectory.get(t.trajectory) ?? []).map(({ trajectory: _, ...turn }) => ({
        ...turn,
        text: texts.get(turn.position) ?? null,
      })),
    })),
  });
}
