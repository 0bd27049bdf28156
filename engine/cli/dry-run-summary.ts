/**
 * What `deno task train --dry-run` prints once the config, every agent's model and the tasks
 * have been checked: the run that would start, in a few lines, so that a user sees what their
 * `--set`s and `extends` resolved to before spending compute on it.
 */
import type { NormalizedConfig } from "../config/mod.ts";
import type { TaskSource } from "../trainer/rollout/mod.ts";

type Trainable = NormalizedConfig["agents"][number]["trainable"];

function trainableText(trainable: Trainable): string {
  return trainable.kind === "lora"
    ? `lora rank ${trainable.rank} alpha ${trainable.alpha}`
    : trainable.kind;
}

/**
 * The summary's lines.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/mod.ts";
 * import { taskSource } from "../trainer/rollout/mod.ts";
 * import { dryRunSummary } from "./dry-run-summary.ts";
 *
 * const config = await loadConfig({ preset: "smoke" });
 * console.log(dryRunSummary(config, await taskSource(config)));
 * ```
 */
export function dryRunSummary(config: NormalizedConfig, tasks: TaskSource): string {
  const agents = config.agents.map((a) =>
    `  ${a.id}: role ${a.role}, model ${a.model}, ${trainableText(a.trainable)}, ` +
    `lr ${a.optimizer.lr}, worker group ${a.wg}`
  );
  return [
    `dry run of ${config.name}: config, models and tasks check out; no store opened, ` +
    "nothing recorded",
    `workflow ${config.workflow.kind}, estimator ${config.estimator.kind}, ${config.steps} ` +
    `steps of batch_size ${config.batch_size} x group_size ${config.group_size}, seed ` +
    `${config.seed}`,
    `tasks ${config.tasks.kind}: ${tasks.train.length} train, ${tasks.validation.length} ` +
    `validation, ${tasks.test.length} test problems`,
    `agents (${config.agents.length}):`,
    ...agents,
    `store ${config.store}, device ${config.runtime.device}`,
  ].join("\n");
}
