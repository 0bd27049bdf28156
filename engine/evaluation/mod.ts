/**
 * Evaluation outside training: a local HF checkpoint, the embedded model or a run's checkpoint,
 * under a protocol (one agent, or a workflow with the same model in every role), n samples per
 * problem and K seeds, every sample recorded as events like a training run's evaluation.
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../events/mod.ts";
 * import type { Runtime } from "../../adapters/onnx/runtime/mod.ts";
 * import { resolveModelSource, runEvaluation } from "./mod.ts";
 * declare const store: EventStore; // the runs' event store
 * declare const runtime: Runtime; // from openRuntime
 * const source = await resolveModelSource(store, "runs/my-model");
 * const result = await runEvaluation({ store, runtime, source, protocol: "single",
 *   benchmarks: ["math500.jsonl"], n: 16, seeds: [0], runIds: ["eval-1"], device: "cpu", threads: 1 });
 * ```
 */
export { EvaluationInputError } from "./errors.ts";
export { type EvalPolicy, openEvalPolicy, type SharedBases, sharedBases } from "./eval-policy.ts";
export {
  findRun,
  type ModelSource,
  pickCheckpoint,
  resolveModelSource,
  type RunCheckpoint,
  type RunCheckpoints,
  runCheckpoints,
  runOfSpec,
  type RunSettings,
  type Trainable,
} from "./model-source.ts";
export { loadBaseModel } from "./base-model.ts";
export { checkpointSpec, checkpointTensors } from "./checkpoint-tensors.ts";
export {
  EVAL_WORKER_GROUP,
  evalConfig,
  type EvalRecord,
  type EvalSettings,
  type Protocol,
  PROTOCOLS,
  recordedEvalConfig,
} from "./protocol.ts";
export {
  type EvalProgress,
  type EvaluationOptions,
  type EvaluationResult,
  runEvaluation,
  runTeamEvaluation,
  type TeamEvaluationOptions,
} from "./run-evaluation.ts";
export {
  resolveTeam,
  teamEvalConfig,
  type TeamEvalSettings,
  type TeamMember,
  type TeamSource,
} from "./team.ts";
export { type BenchmarkSummary, type SeedStat, seedStat, summarizeSeeds } from "./seed-summary.ts";
