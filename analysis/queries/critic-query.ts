import type { Kysely } from "kysely";
import { criticImprovement, type CriticRoundEffect, type DebateAnswer } from "../stats/mod.ts";
import type { AnalysisDb } from "./analysis-db.ts";

/**
 * Critic improvement per round for one run, from the `turns` view: each trajectory of the chosen
 * phase is one debated question, its rounds as the view numbers them. Trajectories with fewer
 * rounds than the run's most (a debate cut short) are left out so rounds line up. Empty when
 * the run has no critic turn (single, refine) or no critic round.
 *
 * @example
 * ```ts
 * import type { Kysely } from "kysely";
 * import type { AnalysisDb } from "./analysis-db.ts";
 * import { criticImprovementOfRun } from "./critic-query.ts";
 * declare const db: Kysely<AnalysisDb>;
 *
 * const rounds = await criticImprovementOfRun(db, "run-3", "eval");
 * rounds.at(-1)?.improvementRate;
 * ```
 */
export async function criticImprovementOfRun(
  db: Kysely<AnalysisDb>,
  runId: string,
  phase: "rollout" | "eval",
): Promise<CriticRoundEffect[]> {
  const turns = await db.selectFrom("turns")
    .select(["step", "trajectory", "round", "role", "parsed_answer", "correct"])
    .where("run_id", "=", runId).where("phase", "=", phase)
    .orderBy("step").orderBy("trajectory").orderBy("round").orderBy("turn").execute();
  // A refine run's solver answers again in later rounds, but with no critic there is no
  // critic effect to measure.
  if (!turns.some((t) => t.role === "critic")) return [];
  const byTrajectory = new Map<string, DebateAnswer[][]>();
  for (const t of turns) {
    const key = `${t.step}\u0000${t.trajectory}`;
    const rounds = byTrajectory.get(key) ?? [];
    byTrajectory.set(key, rounds);
    // The log grades final answers only; an ungraded (NULL) turn counts as not right.
    (rounds[t.round] ??= []).push({ answer: t.parsed_answer, correct: t.correct === true });
  }
  const questions = [...byTrajectory.values()].map((rounds) => ({ rounds }));
  const most = Math.max(0, ...questions.map((q) => q.rounds.length));
  if (most < 2) return [];
  // A round index with no answers (a sparse array slot) means the debate skipped a round.
  const complete = questions.filter((q) =>
    q.rounds.length === most && Array.from(q.rounds, (r) => r !== undefined).every(Boolean)
  );
  return criticImprovement(complete);
}
