import { passAtK } from "../../analysis/stats/mod.ts";
import type { NewEvent } from "../../events/mod.ts";
import type { ChartUpdate } from "../components/chart-data.ts";
import { CHARTS } from "./chart-names.ts";

type Evaluation = Extract<NewEvent, { type: "evaluation.completed" }>["data"];

/**
 * The evaluation-accuracy chart's points for one evaluation, as the projections' eval_summary
 * computes them (so a page followed live equals one loaded afresh): avg@k, the mean over
 * problems with samples of c/n, and pass@k, the mean unbiased estimate over problems with at
 * least k samples, where k is the samples per problem.
 *
 * @example
 * ```ts
 * evalAccuracyUpdates({ step: 3, benchmark: "math500", samplesPerProblem: 2, metrics: {},
 *   problems: [{ problemId: "a", n: 2, c: 1 }] });
 * // [{ chart: "eval-accuracy", x: 3, label: "math500 avg@2", value: 0.5, mode: "set" }, ...]
 * ```
 */
export function evalAccuracyUpdates(d: Evaluation): ChartUpdate[] {
  const k = d.samplesPerProblem;
  const sampled = d.problems.filter((p) => p.n > 0);
  const enough = sampled.filter((p) => p.n >= k);
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const point = (metric: string, value: number): ChartUpdate => ({
    chart: CHARTS.evalAccuracy,
    x: d.step,
    label: `${d.benchmark} ${metric}@${k}`,
    value,
    mode: "set",
  });
  return [
    ...(sampled.length > 0 ? [point("avg", mean(sampled.map((p) => p.c / p.n)))] : []),
    ...(enough.length > 0 ? [point("pass", mean(enough.map((p) => passAtK(p.n, p.c, k))))] : []),
  ];
}
