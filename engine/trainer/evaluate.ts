/**
 * Evaluation inside a run and of a checkpoint: `n_samples` episodes per benchmark problem, each
 * recorded as eval-phase turn and trajectory events, then one `evaluation.completed` per
 * benchmark with every problem's n and c and the avg@n / pass@n they give.
 */
import { benchmarkName, benchmarkQuestions } from "./benchmark-identity.ts";
import type { NewEvent } from "../../events/mod.ts";
import type { NormalizedConfig } from "../config/mod.ts";
import type { Question } from "../workflows/mod.ts";
import { isCorrectAnswer } from "./group-rewards.ts";
import type { RolloutFn, TaskSource } from "./rollout/mod.ts";
import { episodeEvents } from "./run-log/mod.ts";

/**
 * Evaluates on the config's benchmarks at `step` through `rollouts`.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../config/mod.ts";
 * import { evaluate } from "./evaluate.ts";
 * import type { RolloutFn, TaskSource } from "./rollout/mod.ts";
 *
 * declare const config: NormalizedConfig; // evaluation: benchmarks ["validation"], n_samples 4
 * declare const tasks: TaskSource;
 * declare const rollouts: RolloutFn;
 * const { events, metrics } = await evaluate(config, tasks, 10, rollouts);
 * Object.keys(metrics); // ["validation/avg@4", "validation/pass@4"]
 * ```
 */
export async function evaluate(
  config: NormalizedConfig,
  tasks: TaskSource,
  step: number,
  rollouts: RolloutFn,
): Promise<{ events: NewEvent[]; metrics: Record<string, number> }> {
  const n = config.evaluation.n_samples;
  const events: NewEvent[] = [];
  const metrics: Record<string, number> = {};
  const sets = evaluationSets(config, tasks);
  // One rollout over every benchmark's problems: prompt indices run on across benchmarks, so
  // the turn and trajectory coordinates of two benchmarks at one step never collide.
  const results = await rollouts("eval", step, sets.flatMap((s) => s.questions), n);
  let first = 0;
  for (const { benchmark, questions } of sets) {
    const problems = results.slice(first, first + questions.length).map((
      { question, episodes },
      i,
    ) => {
      let c = 0;
      episodes.forEach((episode, sample) => {
        const ok = isCorrectAnswer(question.answer, episode.finalAnswer);
        c += Number(ok);
        events.push(...episodeEvents("eval", step, first + i, sample, question, episode, ok));
      });
      return { problemId: question.id, n, c };
    });
    first += questions.length;
    const name = benchmarkName(benchmark);
    const avg = problems.reduce((s, p) => s + p.c / p.n, 0) / problems.length;
    const pass = problems.filter((p) => p.c > 0).length / problems.length;
    const benchMetrics = { [`avg@${n}`]: avg, [`pass@${n}`]: pass };
    events.push({
      type: "evaluation.completed",
      data: { step, benchmark: name, samplesPerProblem: n, problems, metrics: benchMetrics },
    });
    for (const [k, v] of Object.entries(benchMetrics)) metrics[`${name}/${k}`] = v;
  }
  return { events, metrics };
}

/**
 * Episodes one evaluation rolls out: every benchmark problem times `n_samples`.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../config/mod.ts";
 * import { evaluationEpisodes } from "./evaluate.ts";
 * import type { TaskSource } from "./rollout/mod.ts";
 *
 * declare const config: NormalizedConfig; // evaluation: benchmarks ["validation"], n_samples 2
 * declare const tasks: TaskSource; // 256 validation problems
 * evaluationEpisodes(config, tasks); // 512 (256 problems x 2 samples)
 * ```
 */
export function evaluationEpisodes(config: NormalizedConfig, tasks: TaskSource): number {
  const problems = evaluationSets(config, tasks).reduce((n, s) => n + s.questions.length, 0);
  return problems * config.evaluation.n_samples;
}

/** The config's benchmarks that have problems, with their problems. */
function evaluationSets(
  config: NormalizedConfig,
  tasks: TaskSource,
): { benchmark: string; questions: readonly Question[] }[] {
  const sets = [];
  for (const benchmark of config.evaluation.benchmarks) {
    const questions = benchmarkQuestions(tasks, benchmark);
    if (!questions) throw new Error(`benchmark ${benchmark} was not loaded with the tasks`);
    if (questions.length > 0) sets.push({ benchmark, questions });
  }
  return sets;
}
