/**
 * Experiment configuration: the zod schema of a JSON config file, named presets, layering of
 * preset/file/flags, validation errors that name key, value and what is allowed, the normalized
 * form (worker groups resolved), its stable hash for the run-started event, and the config
 * reference (docs/CONFIG.md) generated from the schema.
 *
 * @example
 * ```ts
 * import { configHash, loadConfig } from "../config/mod.ts";
 * const config = await loadConfig({ preset: "smoke" });
 * const hash = configHash(config);
 * ```
 */
export { ConfigError, type ConfigIssue, formatIssue } from "./errors.ts";
export { issuesFromZod } from "./issues.ts";
export {
  MAX_AGENTS,
  MAX_BATCH_SIZE,
  MAX_BENCHMARKS,
  MAX_DOCUMENTS,
  MAX_EPOCHS,
  MAX_GROUP_SIZE,
  MAX_MINI_BATCHES,
  MAX_NEW_TOKENS,
  MAX_ROLLOUT_EPISODES,
  MAX_SAMPLES,
  MAX_SEEDS,
  MAX_SPLIT,
  MAX_STEPS,
  MAX_STOP_STRINGS,
  MAX_THREADS,
} from "./bounds.ts";
export {
  agentSchema,
  CONFIG_SCHEMA_VERSION,
  DEVICES,
  ESTIMATORS,
  type ExperimentConfig,
  type ExperimentConfigInput,
  experimentConfigSchema,
  LOSS_AGGREGATIONS,
  REWARD_COMPONENTS,
  ROLLOUT_ENGINES,
  trainableSchema,
} from "./schema.ts";
export { type NormalizedConfig, parseConfig } from "./normalize.ts";
export { evaluatesAfter, evaluationSteps } from "./evaluation-schedule.ts";
export { type WorkerGroup } from "./worker-groups.ts";
export { configHash } from "./hash.ts";
export {
  extendConfig,
  mergeConfig,
  type ReplacedVariant,
  replacedVariantWarning,
} from "./merge.ts";
export { applySetOptions, parseSetOption, type SetOption } from "./set-option.ts";
export { upcastRecordedConfig, type UpcastResult } from "./upcast.ts";
export {
  DEFAULT_PRESET,
  PRESET_PROMPTS,
  PRESET_REFERENCES,
  PRESET_SUMMARIES,
  presetInput,
  presetNames,
} from "./presets.ts";
export { type ConfigSources, loadConfig, type OverrideFlags, overridesFromFlags } from "./load.ts";
export { configReference, UndescribedKeyError } from "./config-reference.ts";
