/**
 * Rollout: how a run's episodes are played. The worker groups' policies (policy pool), the
 * speakers that turn a workflow's requests into their turns (in this process with continuous
 * batching, on inference servers through the openai backend, or from a log's recorded turns), and
 * the questions they answer (task source). The training loop, evaluation and the rollout workers
 * all roll out through this folder.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../../config/mod.ts";
 * import type { Runtime } from "../../../adapters/onnx/runtime/mod.ts";
 * import type { Workflow } from "../../workflows/mod.ts";
 * import { openPolicyPool, policyPoolOptions, taskSource, workflowRollouts } from "./mod.ts";
 * declare const runtime: Runtime;
 * declare const config: NormalizedConfig;
 * declare const workflow: Workflow;
 * const pool = await openPolicyPool(runtime, config.worker_groups, policyPoolOptions(config));
 * const rollout = workflowRollouts(config, workflow, pool.groups);
 * const groups = await rollout("rollout", 0, (await taskSource(config)).train, config.group_size);
 * ```
 */
export { endpointPool } from "./endpoint-pool.ts";
export { createOpenAISpeaker } from "./openai-speaker.ts";
export {
  type GroupPolicy,
  hashTensors,
  modelDirectory,
  openBatchWith,
  openPolicyPool,
  type PolicyPool,
  policyPoolOptions,
} from "./policy-pool.ts";
export {
  recordedSpeaker,
  type RecordedTurns,
  recordedTurns,
  REPLAY_ROLLOUTS,
  type ReplayRollouts,
} from "./recorded-turns.ts";
export {
  type Phase,
  type Rollout,
  type RolloutDispatch,
  type RolloutFn,
  type StepWeights,
  workflowRollouts,
} from "./rollouts.ts";
export { decodeSafetensors } from "./safetensors-bytes.ts";
export { type ServedAdapters, servedAdapters } from "./served-adapters.ts";
export { createSpeaker, type SpeakingPolicy, type TurnRecord } from "./speaker.ts";
export { loadQuestions, type TaskSource, taskSource } from "./task-source.ts";
