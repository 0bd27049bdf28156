/**
 * The training loop. Every step: roll out `group_size` episodes of the workflow per prompt (all
 * concurrently; tokens keyed by their coordinates), score them (grades and rewards per prompt
 * group), estimate advantages over the step's groups (engine/advantages registry), update each
 * worker group on its agents' turns (Dr. MAS per-worker-group updates, PPO mini-batches),
 * evaluate, checkpoint. A run of 0 steps evaluates its initial team instead, once, at step 0.
 * Everything that decides a result is sent to the run's event sink before the next step starts:
 * the store for a run, an idempotent store sink for a resumed one, a comparer for a replay (one
 * loop for all three).
 */
import { benchmarkIdentities } from "./benchmark-identity.ts";
import {
  checkRunId,
  type EventStore,
  hashConfig,
  INTERRUPTED_STAGE,
  type NewEvent,
  runCatalogue,
} from "../../events/mod.ts";
import type { Runtime } from "../../adapters/onnx/runtime/mod.ts";
import type { EmbeddedVersion } from "../../adapters/model/mod.ts";
import { estimateStep, estimatorEntry, type GroupAdvantages } from "../advantages/mod.ts";
import { evaluatesAfter, evaluationSteps, type NormalizedConfig } from "../config/mod.ts";
import { randomStream, shuffle } from "../random/mod.ts";
import {
  buildWorkflow,
  type Question,
  type Workflow,
  workflowModuleSource,
} from "../workflows/mod.ts";
import { checkpoints } from "./checkpoints.ts";
import {
  type EventSink,
  holdRunLease,
  type ResumeState,
  rolloutEvents,
  storeSink,
} from "./run-log/mod.ts";
import { evaluate, evaluationEpisodes } from "./evaluate.ts";
import { type GroupRewards, rewardGroup } from "./group-rewards.ts";
import {
  endpointPool,
  type GroupPolicy,
  openPolicyPool,
  type PolicyPool,
  policyPoolOptions,
  type RecordedTurns,
  type ReplayRollouts,
  type Rollout,
  type RolloutDispatch,
  type RolloutFn,
  type ServedAdapters,
  servedAdapters,
  type StepWeights,
  type TaskSource,
  taskSource,
  workflowRollouts,
} from "./rollout/mod.ts";
import { codeVersion, runtimeRecord } from "./runtime-record.ts";
import { placementRecorder, sortedGroups } from "./worker-group-placement.ts";
import { type StepTurn, trainingTurns, updateWorkerGroup } from "./worker-group-update.ts";

/**
 * Progress of a run, for a terminal display or plain log lines. `step` is the step under way,
 * numbered from 0 as in the log; with stage `done` it has finished. A run of 0 steps reports
 * only its evaluation of the initial team, as step 0's `evaluation` then `done`.
 */
export interface TrainProgress {
  readonly step: number;
  readonly steps: number;
  readonly stage: "rollout" | "update" | "evaluation" | "checkpoint" | "done";
  readonly plan: TrainPlan;
  readonly metrics?: Readonly<Record<string, number>>;
}

/** The work of a run, in rollout episodes, for an ETA that includes its evaluations. */
export interface TrainPlan {
  /** Episodes one training step rolls out: prompts times group size. */
  readonly episodesPerStep: number;
  /** Episodes one evaluation rolls out: every benchmark problem times its samples. */
  readonly episodesPerEvaluation: number;
  /** The steps the run's evaluations carry, ascending (engine/config's evaluationSteps). */
  readonly evaluationSteps: readonly number[];
}

/** Where a run goes and how it reports. */
export interface TrainOptions {
  /** The store a fresh run appends to; used when no `sink` is given. */
  readonly store?: EventStore;
  /** Where the events go instead (a resumed run's idempotent store sink, replay's comparer). */
  readonly sink?: EventSink;
  readonly runtime: Runtime;
  readonly runId: string;
  readonly onProgress?: (progress: TrainProgress) => void;
  /** Called once the run is in the store (its `run.started` appended, or resumed), not before. */
  readonly onRecorded?: () => void;
  /** Continue from a checkpoint rather than from step 0; `run.started` is then not re-sent. */
  readonly resume?: ResumeState;
  /**
   * The weights `"embedded"` stands for: those a replayed or resumed run recorded
   * (recordedEmbedded); default the committed model.
   */
  readonly embedded?: EmbeddedVersion;
  /**
   * Aborting stops the run cleanly at the next step boundary, or in the last step before its final
   * evaluation: everything of the finished steps is logged, `run.failed` says it was interrupted
   * (TrainingInterrupted), and `train --resume` continues it.
   */
  readonly signal?: AbortSignal;
  /** Stop after this step (default: the config's last); only a run that reaches the end sends
   * `run.completed`. */
  readonly lastStep?: number;
  /**
   * Rollout requests join the running decode batches between steps (default true); false
   * batches a whole wave of turns at a time, for comparison (tests, benchmarks).
   */
  readonly continuousBatching?: boolean;
  /**
   * A replay's turns instead of sampling (or of the config's servers): `keyed` re-samples each
   * turn in-process and keeps the recorded one where they agree; `recorded` takes them as given.
   */
  readonly replayRollouts?: { readonly mode: ReplayRollouts; readonly turns: RecordedTurns };
  /**
   * Plays the episodes of a run whose config says `rollout.dispatch` "workers" (engine/workers'
   * `workerRollouts`, which deno task train passes); such a run fails without it.
   */
  readonly dispatch?: RolloutDispatch;
}

/**
 * The run was asked to stop (Ctrl-C). Its first `completed` of `steps` steps are wholly in the
 * log; `checkpointed` of them are covered by its last checkpoint, where a resume starts. The
 * message counts steps from 1, as the progress line does (`train 3/5` once three are done).
 */
export class TrainingInterrupted extends Error {
  override name = "TrainingInterrupted";
  /**
   * `completed` steps finished (steps 0 to `completed` - 1), of `steps`; steps 0 to
   * `checkpointed` - 1 are covered by a checkpoint. Steps are named by their number in the log.
   * A run of 0 steps stops before its evaluation of the initial team: `new TrainingInterrupted(0,
   * 0, 0)`.
   */
  constructor(readonly completed: number, readonly steps: number, readonly checkpointed: number) {
    super(interruptedWhere(completed, steps, checkpointed));
  }
}

/** Where an interrupted run stopped and where a resume starts: TrainingInterrupted's message. */
function interruptedWhere(completed: number, steps: number, checkpointed: number): string {
  if (steps === 0) {
    return "stopped before evaluating its initial team (a run of 0 steps); a resume evaluates it";
  }
  const where = completed === 0
    ? `stopped before step 0 finished (0 of ${steps} steps done)`
    : `stopped after step ${completed - 1} (${completed} of ${steps} steps done)`;
  const restart = checkpointed === completed
    ? `; a resume continues at step ${completed}`
    : checkpointed === 0
    ? "; it has no checkpoint yet, so a resume starts again at step 0"
    : `; its last checkpoint is step ${checkpointed - 1}'s, so a resume starts again at step ` +
      `${checkpointed}`;
  return where + restart;
}

/** A resumed run's restored parameters do not hash to what its checkpoint event recorded. */
export class ResumeMismatchError extends Error {
  override name = "ResumeMismatchError";
}

/** What a finished run reports. */
export interface TrainResult {
  readonly runId: string;
  readonly steps: number;
  readonly metrics: Readonly<Record<string, number>>;
  /** Final parameter hash per worker group. */
  readonly parameterHashes: Readonly<Record<string, string>>;
}

/**
 * Runs an experiment to the end, appending every event to `options.store` under `runId`.
 *
 * @example
 * ```ts
 * import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
 * import type { EventStore } from "../../events/mod.ts";
 * import { parseConfig, presetInput } from "../config/mod.ts";
 * import { runTraining } from "./train-loop.ts";
 *
 * declare const store: EventStore;
 * const runtime = await openRuntime("cpu");
 * const config = parseConfig(presetInput("smoke"));
 * const result = await runTraining(config, { store, runtime, runId: "smoke-1" });
 * result.parameterHashes; // each worker group's final parameter hash
 * ```
 */
export async function runTraining(
  config: NormalizedConfig,
  options: TrainOptions,
): Promise<TrainResult> {
  const { runtime, runId, resume } = options;
  const sink = runSink(options);
  const append = (events: NewEvent[]) => sink.append(events);
  const lastStep = Math.min(options.lastStep ?? config.steps - 1, config.steps - 1);
  const { pool, tasks, workflow } = await startRun(config, options, append);
  options.onRecorded?.();
  // Held from here to the end event, so a process that dies in between leaves an expired lease.
  const lease = sink.store ? await holdRunLease(sink.store, runId) : undefined;
  let step = resume?.step ?? 0;
  // Steps covered by the last checkpoint: where a resume would start.
  let checkpointed = step;
  let stage: TrainProgress["stage"] = "rollout";
  let rollouts: RunRollouts | undefined;
  try {
    if (tasks.train.length === 0) throw new Error("the config's tasks have no training questions");
    const plan = trainPlan(config, tasks);
    const progress = (reached: TrainProgress["stage"], metrics?: TrainProgress["metrics"]) =>
      options.onProgress?.({ step, steps: config.steps, stage: reached, plan, metrics });
    const enter = (next: TrainProgress["stage"]) => {
      stage = next;
      progress(stage);
    };
    rollouts = await openRollouts(config, workflow, pool.groups, sink, options);
    const { rollout, served } = rollouts;
    await append(await initEvents(pool.groups, runtime.info.backend));
    // After the init events: those record the initial weights, which a resume regenerates too.
    await restoreCheckpoints(pool.groups, resume);
    // The servers sample step s with the weights after step s - 1's updates: version s.
    await served?.publish(step);

    let lastEval: Record<string, number> = { ...resume?.lastEval };
    if (config.steps === 0) {
      // The team's accuracy before training, measured as the config's evaluations measure it.
      // Like the last step's final evaluation, an interrupt stops before it; a resume evaluates.
      if (options.signal?.aborted) throw new TrainingInterrupted(0, 0, 0);
      enter("evaluation");
      const { events, metrics } = await evaluate(config, tasks, 0, rollout);
      await append(events);
      lastEval = metrics;
      progress("done", lastEval);
    }
    for (; step <= lastStep; step++) {
      if (options.signal?.aborted) throw new TrainingInterrupted(step, config.steps, checkpointed);
      enter("rollout");
      const questions = stepQuestions(config, tasks, step);
      await append([stepStartedEvent(config, step, questions)]);
      const sampled = await rollout("rollout", step, questions, config.group_size);
      const scored = scoreGroups(config, workflow, sampled);
      const advantages = estimateAdvantages(config, scored);
      await append(rolloutEvents(step, sampled, scored, advantages));

      enter("update");
      const turns = trainingTurns(sampled, advantages);
      const updates = await updateAll(config, pool.groups, step, turns, runtime.info.backend);
      await append(updates);
      await served?.publish(step + 1);

      if (evaluatesAfter(config, step)) {
        // The last step has no step boundary after it, and its evaluation is the run's final
        // (often longest) one: an interrupt stops before it. The step then has no checkpoint,
        // so a resume runs it again, events identical, and evaluates.
        if (step === config.steps - 1 && options.signal?.aborted) {
          throw new TrainingInterrupted(step, config.steps, checkpointed);
        }
        enter("evaluation");
        const { events, metrics } = await evaluate(config, tasks, step, rollout);
        await append(events);
        lastEval = metrics;
      }
      // Last in the step, so that a checkpoint at step s means step s is wholly in the log and a
      // resume starts cleanly at s + 1.
      if ((step + 1) % config.checkpoint.every_steps === 0 || step === config.steps - 1) {
        stage = "checkpoint";
        await append(await checkpoints(sink, pool.groups, step));
        checkpointed = step + 1;
      }
      progress("done", stepMetrics(scored, updates, lastEval));
    }
    const parameterHashes = await finalParameterHashes(pool.groups);
    if (lastStep === config.steps - 1) {
      await append([{ type: "run.completed", data: { steps: config.steps, metrics: lastEval } }]);
    }
    return { runId, steps: lastStep + 1, metrics: lastEval, parameterHashes };
  } catch (err) {
    await append([runFailedEvent(step, stage, err)]).catch(() => {});
    throw err;
  } finally {
    await rollouts?.[Symbol.asyncDispose]();
    await lease?.release();
    await pool.release();
  }
}

/** Where the run's events go: `options.sink`, else a sink on `options.store`. */
function runSink(options: TrainOptions): EventSink {
  const { runId, resume } = options;
  // A new run's id names its stream and the files derived from it; resumed and replayed runs
  // keep the id they were recorded under.
  if (options.sink === undefined && resume === undefined) checkRunId(runId);
  const sink = options.sink ??
    (options.store ? storeSink(options.store, runId, { fresh: !resume }) : undefined);
  if (!sink) throw new TypeError("runTraining needs options.store or options.sink");
  return sink;
}

/**
 * The run's worker groups, questions and workflow, and its `run.started` (a new run's; a resumed
 * one has it). All of them are ready before run.started is sent: a model that fails to load, a
 * workflow whose roles do not match the agents, or a custom module that cannot be loaded leaves
 * no run in the store.
 */
async function startRun(
  config: NormalizedConfig,
  options: TrainOptions,
  append: (events: NewEvent[]) => Promise<void>,
): Promise<{ pool: PolicyPool; tasks: TaskSource; workflow: Workflow }> {
  const pool = await openPolicyPool(options.runtime, config.worker_groups, {
    ...policyPoolOptions(config),
    embedded: options.embedded,
  });
  try {
    const tasks = await taskSource(config);
    const workflow = await buildWorkflow(config, tasks.retriever);
    // No run.failed when this fails: the stream may be another run's (a taken run id).
    if (!options.resume) await append([await runStartedEvent(config, options.runtime, tasks)]);
    return { pool, tasks, workflow };
  } catch (err) {
    await pool.release();
    throw err;
  }
}

async function runStartedEvent(
  config: NormalizedConfig,
  runtime: Runtime,
  tasks: TaskSource,
): Promise<NewEvent> {
  const module = await workflowModuleSource(config.workflow);
  return {
    type: "run.started",
    data: {
      config: config as unknown as Record<string, unknown>,
      configHash: hashConfig(config as unknown as Record<string, unknown>),
      seed: config.seed,
      codeVersion: await codeVersion(),
      runtime: runtimeRecord(runtime.info),
      // Only custom workflows have a module; built-in runs record exactly what they always did.
      ...(module ? { workflowModule: module } : {}),
      benchmarks: benchmarkIdentities(config.evaluation.benchmarks, tasks),
      catalogueGeneration: runCatalogue.generation,
    },
  };
}

/** The work of the run, in rollout episodes, for the progress line's ETA. */
function trainPlan(config: NormalizedConfig, tasks: TaskSource): TrainPlan {
  return {
    episodesPerStep: config.batch_size * config.group_size,
    episodesPerEvaluation: evaluationEpisodes(config, tasks),
    evaluationSteps: evaluationSteps(config),
  };
}

/** How a run's episodes are played, the adapters it serves, and what to close after it. */
type RunRollouts =
  & { readonly rollout: RolloutFn; readonly served?: ServedAdapters }
  & AsyncDisposable;

/**
 * The run's rollout function: rollout workers' (`options.dispatch`) when the config dispatches
 * its episodes to them, else this process's, whose turns are sampled here or on the config's
 * inference servers (the openai backend, whose adapters `served` publishes).
 */
async function openRollouts(
  config: NormalizedConfig,
  workflow: Workflow,
  groups: ReadonlyMap<string, GroupPolicy>,
  sink: EventSink,
  options: TrainOptions,
): Promise<RunRollouts> {
  let served: ServedAdapters | undefined;
  let servers;
  // A replay never contacts the recorded servers: its turns come from the log or the process.
  if (config.rollout?.backend === "openai" && !options.replayRollouts) {
    const endpoints = endpointPool(config.rollout);
    served = servedAdapters(endpoints, config.rollout, groups, options.embedded);
    servers = { endpoints, served, engine: config.rollout.engine };
  }
  // Workers need the run's store (replay's comparer has none: it samples in-process).
  if (config.rollout?.dispatch === "workers" && !options.replayRollouts && sink.store) {
    if (!options.dispatch) {
      throw new TypeError('rollout.dispatch "workers" needs options.dispatch (workerRollouts)');
    }
    // Rollout workers play the episodes, with the adapters the trainer publishes to the servers,
    // or with its weights put in the store's blobs.
    const weights: StepWeights = served
      ? { kind: "served", served }
      : { kind: "blobs", putBlob: (bytes) => sink.putBlob(bytes) };
    const workers = await options.dispatch(config, workflow, groups, options.runId, weights);
    return {
      rollout: workers.rollout,
      served,
      [Symbol.asyncDispose]: () => workers[Symbol.asyncDispose](),
    };
  }
  const rollout = workflowRollouts(config, workflow, groups, {
    continuous: options.continuousBatching,
    servers,
    replay: options.replayRollouts,
  });
  return { rollout, served, [Symbol.asyncDispose]: async () => {} };
}

/** The `step.started` event: the step's prompts, by the problem each one poses. */
function stepStartedEvent(
  config: NormalizedConfig,
  step: number,
  questions: readonly Question[],
): NewEvent {
  return {
    type: "step.started",
    data: {
      step,
      groupSize: config.group_size,
      prompts: questions.map((q, prompt) => ({ prompt, problemId: q.id })),
    },
  };
}

/** Each prompt group graded and rewarded, as the estimator's reward scheme says. */
function scoreGroups(
  config: NormalizedConfig,
  workflow: Workflow,
  rollouts: readonly Rollout[],
): GroupRewards[] {
  return rollouts.map(({ question, episodes }) =>
    rewardGroup(question.answer, episodes, {
      scheme: estimatorEntry(config.estimator.kind).rewards,
      roleRewards: workflow.rewards,
      weights: config.rewards.weights,
      invalidActionPenalty: config.rewards.invalid_action_penalty,
    })
  );
}

/** The advantages of every action of the step, the step's groups estimated together. */
function estimateAdvantages(
  config: NormalizedConfig,
  scored: readonly GroupRewards[],
): GroupAdvantages[] {
  return estimateStep(config.estimator.kind, scored.map((s) => s.group), {
    sigma: config.estimator.sigma,
    eps: config.estimator.eps,
  });
}

/** Each worker group's initial weights and first placement. */
async function initEvents(
  groups: ReadonlyMap<string, GroupPolicy>,
  device: string,
): Promise<NewEvent[]> {
  const events: NewEvent[] = [];
  for (const policy of groups.values()) {
    events.push({
      type: "policy.initialized",
      data: {
        workerGroup: policy.id,
        agents: [...policy.agents],
        model: policy.model,
        source: policy.source,
        parameterCount: policy.parameterCount,
        trainableParameterCount: policy.trainableParameterCount,
        parameterHash: await policy.parameterHash(),
        blob: null,
      },
    }, {
      type: "worker_group.loaded",
      data: { step: 0, workerGroup: policy.id, seq: 0, device, bytes: policy.parameterCount * 4 },
    });
  }
  return events;
}

/** Puts a resumed run's checkpointed weights and optimizer state back, checking their hashes. */
async function restoreCheckpoints(
  groups: ReadonlyMap<string, GroupPolicy>,
  resume: ResumeState | undefined,
): Promise<void> {
  for (const [wg, saved] of resume?.checkpoints ?? []) {
    const policy = groups.get(wg);
    if (!policy) throw new ResumeMismatchError(`checkpoint of ${wg}: the config has no such group`);
    await policy.restore(saved.blob, saved.optimizer);
    const hash = await policy.parameterHash();
    if (hash !== saved.parameterHash) {
      throw new ResumeMismatchError(
        `worker group ${wg}: restored parameters hash to ${hash}, the checkpoint recorded ` +
          `${saved.parameterHash}`,
      );
    }
  }
}

/**
 * Every trainable worker group's updates of the step, in id order. With `offload_idle`, each
 * group is on the device only for its own updates.
 */
async function updateAll(
  config: NormalizedConfig,
  groups: ReadonlyMap<string, GroupPolicy>,
  step: number,
  turns: ReadonlyMap<string, readonly StepTurn[]>,
  device: string,
): Promise<NewEvent[]> {
  const events: NewEvent[] = [];
  const placement = placementRecorder(step, device, events);
  const offloading = config.runtime.offload_idle;
  if (offloading) { for (const policy of sortedGroups(groups)) await placement.offload(policy); }
  for (const policy of sortedGroups(groups)) {
    const own = turns.get(policy.id);
    if (!own || policy.trainableParameterCount === 0) continue;
    if (offloading) placement.load(policy);
    events.push(...await updateWorkerGroup(config, policy, step, own));
    if (offloading) await placement.offload(policy);
  }
  if (offloading) { for (const policy of sortedGroups(groups)) placement.load(policy); }
  return events;
}

/** Each agent's gradient norm in its group's last update of the step, for the progress line. */
function agentGradNorms(updates: readonly NewEvent[]): Record<string, number> {
  return Object.fromEntries(
    updates.flatMap((e) =>
      e.type === "gradient_step.applied"
        ? Object.entries(e.data.agentGradNorms).map(([agent, n]) => [`gn:${agent}`, n])
        : []
    ),
  );
}

/** What the progress line shows after a step: its accuracy and reward, gradient norms, last eval. */
function stepMetrics(
  scored: readonly GroupRewards[],
  updates: readonly NewEvent[],
  lastEval: Readonly<Record<string, number>>,
): Record<string, number> {
  const trajectories = scored.flatMap((s) => s.trajectories);
  return {
    accuracy: trajectories.filter((t) => t.correct).length / trajectories.length,
    reward: trajectories.reduce((sum, t) => sum + t.total, 0) / trajectories.length,
    ...agentGradNorms(updates),
    ...lastEval,
  };
}

/** Final parameter hash per worker group, in id order. */
async function finalParameterHashes(
  groups: ReadonlyMap<string, GroupPolicy>,
): Promise<Record<string, string>> {
  const hashes: Record<string, string> = {};
  for (const policy of sortedGroups(groups)) hashes[policy.id] = await policy.parameterHash();
  return hashes;
}

/** The `run.failed` event of an error at `step` and `stage` (an interrupt has its own stage). */
function runFailedEvent(step: number, stage: TrainProgress["stage"], err: unknown): NewEvent {
  const e = err instanceof Error ? err : new Error(String(err));
  return {
    type: "run.failed",
    data: {
      step,
      stage: err instanceof TrainingInterrupted ? INTERRUPTED_STAGE : stage,
      error: { name: e.name, message: e.message },
    },
  };
}

/** The step's prompts: the training split shuffled per epoch, taken `batch_size` at a time. */
export function stepQuestions(
  config: Pick<NormalizedConfig, "seed" | "batch_size">,
  tasks: Pick<TaskSource, "train">,
  step: number,
): Question[] {
  const n = tasks.train.length;
  const out: Question[] = [];
  for (let i = 0; i < config.batch_size; i++) {
    const position = step * config.batch_size + i;
    const epoch = Math.floor(position / n);
    const order = shuffle(
      randomStream({ seed: config.seed, purpose: "epoch-order", step: epoch }),
      tasks.train,
    );
    out.push(order[position % n]);
  }
  return out;
}
