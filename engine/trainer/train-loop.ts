/**
 * The training loop. Every step: pick the step's prompts, roll out `group_size` episodes of the
 * workflow per prompt (all concurrently; tokens keyed by their coordinates), grade and reward
 * them, compute advantages per prompt group, then one optimizer step per worker group on the
 * turns of its agents (Dr. MAS per-worker-group updates). Everything that decides a result is
 * sent to the run's event sink before the next step starts: the store for a run, an idempotent
 * store sink for a resumed one, a comparer for a replay (one loop for all three).
 */
import type { EventStore, NewEvent } from "../../events/mod.ts";
import { type EventSink, storeSink } from "./event-sink.ts";
import type { ResumeState } from "./resume-state.ts";
import { hashConfig } from "../../events/mod.ts";
import type { Runtime } from "../../adapters/onnx/runtime/mod.ts";
import type { NormalizedConfig } from "../config/mod.ts";
import { randomStream, shuffle } from "../random/mod.ts";
import { buildWorkflow, type Episode, type Question } from "../workflows/mod.ts";
import { assignCredit, isCorrectAnswer } from "./credit.ts";
import { policyBatch, type TrainingTurn } from "./policy-batch.ts";
import { type GroupPolicy, openPolicyPool } from "./policy-pool.ts";
import { codeVersion, runtimeRecord } from "./runtime-record.ts";
import { createSpeaker, type EpisodeCoordinates, type TurnRecord } from "./speaker.ts";
import { type TaskSource, taskSource } from "./task-source.ts";

/** Progress of a run, for a terminal display or plain log lines. */
export interface TrainProgress {
  readonly step: number;
  readonly steps: number;
  readonly stage: "rollout" | "update" | "evaluation" | "checkpoint" | "done";
  readonly metrics?: Readonly<Record<string, number>>;
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
  /** Continue from a checkpoint rather than from step 0; `run.started` is then not re-sent. */
  readonly resume?: ResumeState;
  /**
   * Aborting stops the run cleanly at the next step boundary: everything of the finished steps is
   * logged, `run.failed` says it was interrupted, and `train --resume` continues it.
   */
  readonly signal?: AbortSignal;
  /** Stop after this step (default: the config's last); only a run that reaches the end sends
   * `run.completed`. */
  readonly lastStep?: number;
}

/** The run was asked to stop (Ctrl-C); every step before `step` is in the log. */
export class TrainingInterrupted extends Error {
  override name = "TrainingInterrupted";
  constructor(readonly step: number) {
    super(`interrupted before step ${step}; continue with deno task train --resume RUN`);
  }
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

/** The episodes sampled for one question. */
export type Rollout = { question: Question; episodes: Episode<TurnRecord>[] };

/**
 * Runs an experiment to the end, appending every event to `options.store` under `runId`.
 *
 * @example
 * const result = await runTraining(parseConfig(presetInput("smoke")), { store, runtime, runId });
 */
export async function runTraining(
  config: NormalizedConfig,
  options: TrainOptions,
): Promise<TrainResult> {
  const { runtime, runId, resume } = options;
  const sink = options.sink ??
    (options.store ? storeSink(options.store, runId, { fresh: !resume }) : undefined);
  if (!sink) throw new TypeError("runTraining needs options.store or options.sink");
  const append = (events: NewEvent[]) => sink.append(events);
  const lastStep = Math.min(options.lastStep ?? config.steps - 1, config.steps - 1);
  if (!resume) {
    await append([{
      type: "run.started",
      data: {
        config: config as unknown as Record<string, unknown>,
        configHash: hashConfig(config as unknown as Record<string, unknown>),
        seed: config.seed,
        codeVersion: await codeVersion(),
        runtime: runtimeRecord(runtime.info),
      },
    }]);
  }
  let step = resume?.step ?? 0;
  let stage: TrainProgress["stage"] = "rollout";
  const pool = await openPolicyPool(runtime, config.worker_groups, {
    seed: config.seed,
    klCoef: config.loss.kl_coef,
  });
  try {
    const tasks = await taskSource(config);
    if (tasks.train.length === 0) throw new Error("the config's tasks have no training questions");
    const workflow = await buildWorkflow(config, tasks.retriever);
    const speaker = createSpeaker(pool.groups, config.agent_to_wg, {
      seed: config.seed,
      temperature: config.sampling.temperature,
      topP: config.sampling.top_p,
      maxTokens: config.sampling.max_tokens,
      stop: config.sampling.stop,
      maxBatch: 64,
    });
    const init: NewEvent[] = [];
    for (const policy of pool.groups.values()) {
      init.push({
        type: "policy.initialized",
        data: {
          workerGroup: policy.id,
          agents: [...policy.agents],
          model: policy.model,
          source: policy.model,
          parameterCount: policy.parameterCount,
          trainableParameterCount: policy.trainableParameterCount,
          parameterHash: await policy.parameterHash(),
          blob: null,
        },
      }, {
        type: "worker_group.loaded",
        data: {
          step: 0,
          workerGroup: policy.id,
          seq: 0,
          device: runtime.info.backend,
          bytes: policy.parameterCount * 4,
        },
      });
    }
    await append(init);
    // After the init events: those record the initial weights, which a resume regenerates too.
    for (const [wg, saved] of resume?.checkpoints ?? []) {
      const policy = pool.groups.get(wg);
      if (!policy) {
        throw new ResumeMismatchError(`checkpoint of ${wg}: the config has no such group`);
      }
      await policy.restore(saved.blob, saved.optimizer);
      const hash = await policy.parameterHash();
      if (hash !== saved.parameterHash) {
        throw new ResumeMismatchError(
          `worker group ${wg}: restored parameters hash to ${hash}, the checkpoint recorded ` +
            `${saved.parameterHash}`,
        );
      }
    }

    const rollouts = (
      phase: "rollout" | "eval",
      at: number,
      questions: readonly Question[],
      n: number,
    ) =>
      Promise.all(questions.map(async (question, prompt): Promise<Rollout> => ({
        question,
        episodes: await Promise.all(Array.from({ length: n }, (_, sample) => {
          const coords: EpisodeCoordinates = { phase, step: at, prompt, sample };
          return workflow.run(question, speaker.speakFor(coords));
        })),
      })));

    let lastEval: Record<string, number> = { ...resume?.lastEval };
    for (; step <= lastStep; step++) {
      if (options.signal?.aborted) throw new TrainingInterrupted(step);
      stage = "rollout";
      options.onProgress?.({ step, steps: config.steps, stage });
      const questions = stepQuestions(config, tasks, step);
      await append([{
        type: "step.started",
        data: {
          step,
          groupSize: config.group_size,
          prompts: questions.map((q, prompt) => ({ prompt, problemId: q.id })),
        },
      }]);
      const groups = await rollouts("rollout", step, questions, config.group_size);
      const training = new Map<string, TrainingTurn[]>();
      const events: NewEvent[] = [];
      let correct = 0;
      let rewardSum = 0;
      groups.forEach(({ question, episodes }, prompt) => {
        const credit = assignCredit(question.answer, episodes, {
          estimator: config.estimator.kind,
          options: { sigma: config.estimator.sigma, eps: config.estimator.eps },
          weights: config.rewards.weights,
          invalidActionPenalty: config.rewards.invalid_action_penalty,
        });
        episodes.forEach((episode, sample) => {
          const t = credit.trajectories[sample];
          correct += Number(t.correct);
          rewardSum += t.total;
          events.push(
            ...episodeEvents("rollout", step, prompt, sample, question, episode, t.correct),
            rewardEvent("rollout", step, prompt, sample, null, t.components, t.total),
            ...Object.entries(t.agentRewards).map(([agent, r]) =>
              rewardEvent("rollout", step, prompt, sample, agent, { reward: r }, r)
            ),
          );
        });
        events.push({
          type: "advantages.computed",
          data: {
            step,
            prompt,
            estimator: credit.advantages.estimator,
            sigmaConvention: credit.advantages.options.sigma,
            eps: credit.advantages.options.eps,
            baseline: {
              global: credit.advantages.global,
              perAgent: Object.fromEntries(
                credit.advantages.agents.map((a) => [
                  a.agent,
                  { mu: a.mu, sigma: a.sigma, n: a.n, multiplier: a.multiplier },
                ]),
              ),
            },
            advantages: credit.advantages.actions.map((a) => ({
              trajectory: trajectoryId("rollout", step, prompt, a.sample),
              sample: a.sample,
              agent: a.agent,
              turn: a.turn,
              advantage: a.advantage,
            })),
          },
        });
        for (const a of credit.advantages.actions) {
          const turn = episodes[a.sample].turns.find((t) => t.turn === a.turn)!;
          const record = turn.output.extra;
          if (record.responseTokens.length === 0) continue;
          const list = training.get(record.workerGroup) ?? [];
          list.push({
            agent: a.agent,
            promptTokens: record.promptTokens,
            responseTokens: record.responseTokens,
            logprobs: record.logprobs,
            advantage: a.advantage,
          });
          training.set(record.workerGroup, list);
        }
      });
      await append(events);

      stage = "update";
      options.onProgress?.({ step, steps: config.steps, stage });
      const updates: NewEvent[] = [];
      // With offload_idle, each group is on the device only for its own update (Dr. MAS
      // offload/resume), and every move is an event for the dashboard's timeline.
      const placement = placementRecorder(step, runtime.info.backend, updates);
      const offloading = config.runtime.offload_idle;
      if (offloading) {
        for (const policy of sortedGroups(pool.groups)) await placement.offload(policy);
      }
      for (const policy of sortedGroups(pool.groups)) {
        const turns = training.get(policy.id);
        if (!turns || policy.trainableParameterCount === 0) continue;
        if (offloading) placement.load(policy);
        updates.push(await update(config, policy, step, turns));
        if (offloading) await placement.offload(policy);
      }
      if (offloading) { for (const policy of sortedGroups(pool.groups)) placement.load(policy); }
      await append(updates);

      const every = config.evaluation.every_steps;
      if ((every > 0 && (step + 1) % every === 0) || step === config.steps - 1) {
        stage = "evaluation";
        options.onProgress?.({ step, steps: config.steps, stage });
        const { events: evalEvents, metrics } = await evaluate(config, tasks, step, rollouts);
        await append(evalEvents);
        lastEval = metrics;
      }
      // Last in the step, so that a checkpoint at step s means step s is wholly in the log and a
      // resume starts cleanly at s + 1.
      if ((step + 1) % config.checkpoint.every_steps === 0 || step === config.steps - 1) {
        stage = "checkpoint";
        await append(await checkpoints(sink, pool.groups, step));
      }
      options.onProgress?.({
        step,
        steps: config.steps,
        stage: "done",
        metrics: {
          accuracy: correct / (questions.length * config.group_size),
          reward: rewardSum / (questions.length * config.group_size),
          // Each agent's gradient norm where its group measured one (groups of one agent).
          ...Object.fromEntries(
            updates.flatMap((e) =>
              e.type === "gradient_step.applied"
                ? Object.entries(e.data.agentGradNorms).map(([agent, n]) => [`gn:${agent}`, n])
                : []
            ),
          ),
          ...lastEval,
        },
      });
    }
    const parameterHashes: Record<string, string> = {};
    for (const policy of sortedGroups(pool.groups)) {
      parameterHashes[policy.id] = await policy.parameterHash();
    }
    if (lastStep === config.steps - 1) {
      await append([{ type: "run.completed", data: { steps: config.steps, metrics: lastEval } }]);
    }
    return { runId, steps: lastStep + 1, metrics: lastEval, parameterHashes };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    await append([{
      type: "run.failed",
      data: {
        step,
        stage: err instanceof TrainingInterrupted ? "interrupted" : stage,
        error: { name: e.name, message: e.message },
      },
    }]).catch(() => {});
    throw err;
  } finally {
    await pool.release();
  }
}

/** Offloads and loads worker groups, recording each move that happened as an event. */
function placementRecorder(step: number, device: string, events: NewEvent[]) {
  // seq 0 of step 0 is the initial load.
  const seq = new Map<string, number>();
  const record = (
    type: "worker_group.loaded" | "worker_group.offloaded",
    wg: string,
    bytes: number,
  ) => {
    if (bytes === 0) return;
    const next = (seq.get(wg) ?? 0) + 1;
    seq.set(wg, next);
    events.push({ type, data: { step, workerGroup: wg, seq: next, device, bytes } });
  };
  return {
    offload: async (policy: GroupPolicy) =>
      record("worker_group.offloaded", policy.id, await policy.offload()),
    load: (policy: GroupPolicy) => record("worker_group.loaded", policy.id, policy.load()),
  };
}

function sortedGroups(groups: ReadonlyMap<string, GroupPolicy>): GroupPolicy[] {
  return [...groups.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
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

/** The trajectory id of an episode: readable and unique within a run. */
export function trajectoryId(phase: string, step: number, prompt: number, sample: number): string {
  return `${phase}-s${step}-p${prompt}-k${sample}`;
}

function episodeEvents(
  phase: "rollout" | "eval",
  step: number,
  prompt: number,
  sample: number,
  question: Question,
  episode: Episode<TurnRecord>,
  correct: boolean,
): NewEvent[] {
  const trajectory = trajectoryId(phase, step, prompt, sample);
  const last = episode.turns[episode.turns.length - 1];
  return [
    ...episode.turns.map((t): NewEvent => ({
      type: "turn.generated",
      data: {
        step,
        phase,
        trajectory,
        prompt,
        sample,
        turn: t.turn,
        agent: t.agent,
        role: t.role,
        workerGroup: t.output.extra.workerGroup,
        promptTokens: t.output.extra.promptTokens,
        responseTokens: t.output.extra.responseTokens,
        logprobs: t.output.extra.logprobs,
        finishReason: t.output.extra.finishReason,
        parsedAnswer: t.action.kind === "answer" ? t.action.answer : null,
        correct: t.action.kind === "answer" && t.action.answer !== null
          ? isCorrectAnswer(question.answer, t.action.answer)
          : null,
        text: t.output.text,
      },
    })),
    {
      type: "trajectory.completed",
      data: {
        step,
        phase,
        trajectory,
        prompt,
        sample,
        problemId: question.id,
        turns: episode.turns.length,
        agents: [...new Set(episode.turns.map((t) => t.agent))],
        finalAnswer: episode.finalAnswer,
        correct,
        tokens: episode.turns.reduce((n, t) => n + t.output.extra.responseTokens.length, 0),
        terminationReason: episode.finalAnswer === null
          ? "no_answer"
          : last?.output.extra.finishReason === "length"
          ? "max_tokens"
          : "answered",
      },
    },
  ];
}

function rewardEvent(
  phase: "rollout" | "eval",
  step: number,
  prompt: number,
  sample: number,
  agent: string | null,
  components: Readonly<Record<string, number>>,
  total: number,
): NewEvent {
  return {
    type: "reward.assigned",
    data: {
      step,
      phase,
      trajectory: trajectoryId(phase, step, prompt, sample),
      prompt,
      sample,
      agent,
      components: { ...components },
      total,
    },
  };
}

async function update(
  config: NormalizedConfig,
  policy: GroupPolicy,
  step: number,
  turns: TrainingTurn[],
): Promise<NewEvent> {
  const wg = config.worker_groups.find((g) => g.id === policy.id)!;
  // Linear warmup over the first warmup_ratio of the run (never at lr 0), then the set lr.
  const warmupSteps = Math.ceil(wg.optimizer.warmup_ratio * config.steps);
  const hyper = {
    lr: step < warmupSteps ? wg.optimizer.lr * (step + 1) / (warmupSteps + 1) : wg.optimizer.lr,
    clipLow: config.loss.clip_eps,
    clipHigh: config.loss.clip_eps,
    klCoef: config.loss.kl_coef,
    weightDecay: wg.optimizer.weight_decay,
    maxGradNorm: wg.optimizer.max_grad_norm,
  };
  const plain = policyBatch(turns);
  const batch = config.loss.kl_coef > 0
    ? { ...plain, refLogprobs: await policy.referenceLogprobs(plain) }
    : plain;
  // A group of one agent: its gradient is the agent's. A shared group's gradient is the sum of
  // its agents' parts; each part's norm costs one more backward pass, before the update.
  const agentGradNorms: Record<string, number> = {};
  if (policy.agents.length > 1) {
    for (const agent of policy.agents) {
      const rows = turns.flatMap((t, row) => t.agent === agent ? [row] : []);
      agentGradNorms[agent] = await policy.gradientNorm(batch, hyper, rows);
    }
  }
  const m = await policy.update(batch, hyper);
  if (policy.agents.length === 1) agentGradNorms[policy.agents[0]] = m.gradNorm;
  const after = m.skipped ? 0 : Math.min(m.gradNorm, hyper.maxGradNorm);
  return {
    type: "gradient_step.applied",
    data: {
      step,
      workerGroup: policy.id,
      update: 0,
      agents: [...policy.agents],
      losses: { total: m.loss, policy: m.policyLoss, kl: m.klLoss },
      gradNormBeforeClip: m.gradNorm,
      gradNormAfterClip: after,
      agentGradNorms,
      clipFraction: m.clipFraction,
      kl: m.approxKl,
      entropy: m.entropy,
      lr: hyper.lr,
      tokens: m.lossTokens,
      skippedNonFinite: m.skipped,
      parameterHash: await policy.parameterHash(),
    },
  };
}

async function checkpoints(
  sink: EventSink,
  groups: ReadonlyMap<string, GroupPolicy>,
  step: number,
): Promise<NewEvent[]> {
  const events: NewEvent[] = [];
  for (const policy of sortedGroups(groups)) {
    if (policy.trainableParameterCount === 0) continue;
    const bytes = await policy.checkpoint();
    const optimizer = await policy.optimizerCheckpoint();
    events.push({
      type: "checkpoint.saved",
      data: {
        step,
        workerGroup: policy.id,
        blob: await sink.putBlob(bytes),
        bytes: bytes.length,
        parameterHash: await policy.parameterHash(),
        optimizerBlob: optimizer && await sink.putBlob(optimizer),
        format: "safetensors",
      },
    });
  }
  return events;
}

/**
 * Evaluates on the config's benchmarks at `step`: `n_samples` episodes per problem through
 * `rollouts`, each recorded as eval-phase turn and trajectory events, then one
 * `evaluation.completed` per benchmark (per problem n and c, avg@n and pass@n).
 * Also used by engine/evaluation for checkpoints evaluated outside a training run.
 *
 * @example const { events, metrics } = await evaluate(config, tasks, step, rollouts);
 */
export async function evaluate(
  config: NormalizedConfig,
  tasks: TaskSource,
  step: number,
  rollouts: (
    phase: "rollout" | "eval",
    at: number,
    questions: readonly Question[],
    n: number,
  ) => Promise<Rollout[]>,
): Promise<{ events: NewEvent[]; metrics: Record<string, number> }> {
  const n = config.evaluation.n_samples;
  const events: NewEvent[] = [];
  const metrics: Record<string, number> = {};
  const sets: { benchmark: string; questions: readonly Question[] }[] = [];
  for (const benchmark of config.evaluation.benchmarks) {
    const questions = benchmark === "validation"
      ? tasks.validation
      : benchmark === "test"
      ? tasks.test
      : tasks.benchmarks.get(benchmark);
    if (!questions) throw new Error(`benchmark ${benchmark} was not loaded with the tasks`);
    if (questions.length > 0) sets.push({ benchmark, questions });
  }
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

/** The name a benchmark's `evaluation.completed` carries: the file name without extension. */
export function benchmarkName(benchmark: string): string {
  const base = benchmark.split("/").pop()!;
  return base.replace(/\.(jsonl|json|parquet)$/i, "");
}
