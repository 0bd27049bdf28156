import { type Kysely, sql } from "kysely";
import type { BenchmarkOutcomes } from "../report/mod.ts";
import type { AnalysisDb } from "./analysis-db.ts";

/**
 * Each run's outcome on every problem at its last evaluated step (the step its report accuracy
 * comes from), with the SHA-256 of the benchmark's problems (NULL for runs recorded before
 * `run.started` carried it): two runs whose hashes agree were graded on the same problems, so
 * their outcomes pair problem by problem. Plain SQL over the tables of analysis/TABLES.md, so the
 * same statement answers in `deno task sql`.
 */
export const PROBLEM_OUTCOMES_SQL = `SELECT e.run_id, e.benchmark,
    e.samples_per_problem AS k, b.sha256 AS benchmark_sha256, e.problem_id, e.n, e.c
  FROM evals e LEFT JOIN run_benchmarks b USING (run_id, benchmark)
  WHERE e.n > 0
    AND e.step = (SELECT max(l.step) FROM evals l WHERE l.run_id = e.run_id AND l.n > 0)`;

/**
 * One run's per-problem outcomes at its last evaluated step, one entry per benchmark and samples
 * per problem, problems in id order.
 *
 * @example
 * ```ts
 * import type { Kysely } from "kysely";
 * import type { AnalysisDb } from "./analysis-db.ts";
 * import { problemOutcomesOfRun } from "./problem-outcomes.ts";
 * declare const db: Kysely<AnalysisDb>;
 *
 * const [math] = await problemOutcomesOfRun(db, "run-1");
 * math.problems[0]; // { problem: "math/0", n: 4, c: 3 }
 * ```
 */
export async function problemOutcomesOfRun(
  db: Kysely<AnalysisDb>,
  runId: string,
): Promise<BenchmarkOutcomes[]> {
  const { rows } = await sql<{
    benchmark: string;
    k: number;
    benchmark_sha256: string | null;
    problem_id: string;
    n: number;
    c: number;
  }>`SELECT * FROM (${sql.raw(PROBLEM_OUTCOMES_SQL)}) WHERE run_id = ${runId}
    ORDER BY benchmark, k, problem_id`.execute(db);
  const groups = Map.groupBy(rows, (r) => `${r.benchmark}\u0000${r.k}`);
  return [...groups.values()].map((g) => ({
    benchmark: g[0].benchmark,
    k: g[0].k,
    sha256: g[0].benchmark_sha256,
    problems: g.map((r) => ({ problem: r.problem_id, n: r.n, c: r.c })),
  }));
}
