/**
 * How many problems a run's final accuracy averages over, and how many samples each, read from
 * its config: the power analysis rescales the per-seed spread of accuracy with them.
 */
import type { NormalizedConfig } from "../engine/config/mod.ts";
import type { EvaluationSize } from "./claim-power.ts";

/**
 * The evaluation of a config: problems per run when its benchmarks are generated splits
 * (`validation`, `test`) of a synthetic task, null when a benchmark is a file (its size is the
 * file's).
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../engine/config/mod.ts";
 * declare const config: NormalizedConfig;
 * evaluationSize(config); // { problems: 16, samples: 16 }
 * ```
 */
export function evaluationSize(config: NormalizedConfig): EvaluationSize {
  const t = config.tasks;
  const splits = "splits" in t ? t.splits : null;
  const sizes = config.evaluation.benchmarks.map((b) =>
    splits !== null && (b === "validation" || b === "test") ? splits[b] : null
  );
  const problems = sizes.some((x) => x === null) ? null : sizes.reduce((s: number, x) => s + x!, 0);
  return { problems, samples: config.evaluation.n_samples };
}
