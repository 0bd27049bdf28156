import { type Kysely, sql } from "kysely";
import type { AccuracyMetric, ConfigValue, RunSummary } from "../report/mod.ts";
import type { AnalysisDb } from "./analysis-db.ts";
import { criticImprovementOfRun } from "./critic-query.ts";
import { problemOutcomesOfRun } from "./problem-outcomes.ts";

/**
 * The report column of a benchmark evaluated with k samples per problem: "math avg@16". Results
 * with different k are different measurements, so they never share a column or an average.
 *
 * @example
 * ```ts
 * import { accuracyColumn } from "./run-summaries.ts";
 *
 * accuracyColumn("math", "pass@k", 4); // "math pass@4"
 * ```
 */
export function accuracyColumn(benchmark: string, metric: AccuracyMetric, k: number): string {
  return `${benchmark} ${metric.replace(/k$/, String(k))}`;
}

/**
 * Reads what the report needs of each run from the projections: flattened config (plus the
 * runs view's estimator, workflow, seed and models, so they group even when the config names
 * them differently), avg@k or pass@k per benchmark at the run's last evaluated step (one column
 * per benchmark and k, named by `accuracyColumn`), gradient
 * norms per worker group, one per optimizer update in the order applied (step, then update:
 * several per step with PPO epochs and mini-batches), the per-step mean Lemma 4.2 multiplier per
 * agent, critic effects on eval debates, cost figures, and the outcome on every problem at that
 * evaluation (by avg@k column, whatever the metric: the per-problem view pairs them).
 *
 * @example
 * ```ts
 * import type { Analysis } from "./open-analysis.ts";
 * import { resolveRuns } from "./resolve-runs.ts";
 * import { loadRunSummaries } from "./run-summaries.ts";
 * declare const a: Analysis;
 *
 * const runs = await loadRunSummaries(a.db, await resolveRuns(a.db, ["latest"]));
 * ```
 */
export async function loadRunSummaries(
  db: Kysely<AnalysisDb>,
  runIds: readonly string[],
  metric: AccuracyMetric = "avg@k",
): Promise<RunSummary[]> {
  const column = metric === "avg@k" ? "avg_at_k" : "pass_at_k";
  const out: RunSummary[] = [];
  for (const runId of runIds) {
    const run = await db.selectFrom("runs").selectAll().where("run_id", "=", runId)
      .executeTakeFirstOrThrow();
    const config: Record<string, ConfigValue> = {};
    for (
      const r of await db.selectFrom("run_config").select(["key", "value"]).where(
        "run_id",
        "=",
        runId,
      ).execute()
    ) {
      config[r.key] = r.value;
    }
    Object.assign(config, {
      estimator: run.estimator,
      workflow: run.workflow,
      seed: run.seed,
      models: run.models,
    });
    const evals = await db.selectFrom("eval_summary").select(["benchmark", "k", column])
      .where("run_id", "=", runId)
      .where(
        "step",
        "=",
        (eb) =>
          eb.selectFrom("eval_summary").select((e) => e.fn.max("step").as("s")).where(
            "run_id",
            "=",
            runId,
          ),
      )
      .execute();
    const norms = await db.selectFrom("grad_steps").select(["wg", "grad_norm"])
      .where("run_id", "=", runId).orderBy("wg").orderBy("step").orderBy("update").execute();
    const gradNorms = new Map<string, number[]>();
    for (const n of norms) gradNorms.set(n.wg, [...(gradNorms.get(n.wg) ?? []), n.grad_norm]);
    const lemmaRows = await db.selectFrom("lemma_multipliers")
      .select(["agent", "step", (eb) => eb.fn.avg<number>("multiplier").as("m")])
      .where("run_id", "=", runId).groupBy(["agent", "step"]).orderBy("agent").orderBy("step")
      .execute();
    const lemma = new Map<string, number[]>();
    for (const l of lemmaRows) lemma.set(l.agent, [...(lemma.get(l.agent) ?? []), l.m ?? NaN]);
    const cost = await db.selectFrom("trajectories")
      .select([
        sql<number>`sum(tokens) / count(DISTINCT (phase, step, prompt))`.as("tokens_per_question"),
        (eb) => eb.fn.avg<number>("turns").as("turns_per_trajectory"),
      ])
      .where("run_id", "=", runId).executeTakeFirstOrThrow();
    const problems = (await problemOutcomesOfRun(db, runId))
      .map((o) => [accuracyColumn(o.benchmark, "avg@k", o.k), o] as const);
    out.push({
      runId,
      config,
      // pass@k is undefined where a problem had fewer than k samples; such a benchmark is left
      // out of the run's columns (and so of the average over the columns every run has).
      accuracy: Object.fromEntries(
        evals.filter((e) => e[column] !== null).map((
          e,
        ) => [accuracyColumn(e.benchmark, metric, e.k), e[column] as number]),
      ),
      gradNorms: [...gradNorms].map(([wg, values]) => ({ wg, norms: values })),
      lemma: [...lemma].map(([agent, multipliers]) => ({ agent, multipliers })),
      critic: await criticImprovementOfRun(db, runId, "eval"),
      tokensPerQuestion: cost.tokens_per_question ?? null,
      turnsPerTrajectory: cost.turns_per_trajectory ?? null,
      trainableParameters: run.trainable_parameters,
      problems: Object.fromEntries(problems),
    });
  }
  return out;
}
