/**
 * The catalogue of events that make up a run, each at its current schema version. A run's stream
 * id is its run id; every event's id derives from the coordinates listed with it.
 *
 * | type                     | coordinates                                  | one per            |
 * | ------------------------ | -------------------------------------------- | ------------------ |
 * | `run.started`            | -                                            | run                |
 * | `policy.initialized`     | workerGroup                                  | worker group       |
 * | `worker_group.loaded`    | step, workerGroup, seq                       | load               |
 * | `worker_group.offloaded` | step, workerGroup, seq                       | offload            |
 * | `step.started`           | step                                         | step               |
 * | `turn.generated`         | step, phase, agent, prompt, sample, turn     | agent output       |
 * | `trajectory.completed`   | step, phase, prompt, sample                  | trajectory         |
 * | `reward.assigned`        | step, phase, prompt, sample, agent           | reward             |
 * | `advantages.computed`    | step, prompt                                 | prompt group       |
 * | `gradient_step.applied`  | step, workerGroup, update                    | optimizer update   |
 * | `checkpoint.saved`       | step, workerGroup                            | checkpoint         |
 * | `evaluation.completed`   | step, benchmark                              | evaluation         |
 * | `run.completed`          | -                                            | run                |
 * | `run.failed`             | step                                         | failure            |
 *
 * Annotations (tags, hiding) are events too, in a stream of their own: see run-annotations.ts.
 *
 * @example
 * ```ts
 * import { type NewEvent, runCatalogue } from "./catalogue.ts";
 *
 * const e: NewEvent = {
 *   type: "step.started",
 *   data: { step: 0, groupSize: 8, prompts: [{ prompt: 0, problemId: "gsm8k/17" }] },
 * };
 * runCatalogue.validate(e.type, e.data);
 * ```
 */
import { z } from "zod";
import { createCatalogue, defineEvent, type Upcaster } from "./define-event.ts";
import {
  baselineStats,
  count,
  float,
  floatRecord,
  logprobs,
  name,
  phase,
  sha256,
  tokenIds,
} from "./fields.ts";
import { encodeCanonical } from "./canonical.ts";
import { sha256Hex } from "./hash-chain.ts";
import { CanonicalEncodingError } from "./errors.ts";
import { annotationEventDefinitions } from "./run-annotations.ts";

/** sha256 of the canonical JSON of a normalized config: the `configHash` of `run.started`. */
export function hashConfig(config: Readonly<Record<string, unknown>>): string {
  return sha256Hex(encodeCanonical(config).json);
}

const runtime = z.strictObject({
  deno: z.string(),
  v8: z.string(),
  typescript: z.string(),
  /** onnxruntime package version, null when the run uses none */
  onnxruntime: z.string().nullable(),
  /** "webgpu", "wasm", "cpu", ... */
  executionProvider: z.string(),
  /** WebGPU adapter info (vendor, architecture, device, description) or null */
  adapter: z.record(z.string(), z.string()).nullable(),
  threads: count,
  os: z.string(),
  arch: z.string(),
});

/** A run began: everything needed to reproduce it. */
export const runStarted = defineEvent({
  type: "run.started",
  schemaVersion: 1,
  schema: z.strictObject({
    config: z.record(z.string(), z.unknown()),
    configHash: sha256,
    seed: z.number().int(),
    codeVersion: z.string().min(1),
    runtime,
    /**
     * A custom workflow's module: the path it was loaded from and the SHA-256 of its source
     * (replay names a changed module as a divergence's cause). Absent for built-in workflows,
     * so their events are unchanged.
     */
    workflowModule: z.strictObject({ path: z.string().min(1), sha256 }).optional(),
    /**
     * What the run evaluates on, by the name its `evaluation.completed` events carry: the problem
     * count and the SHA-256 of the problems (id, problem, answer; canonical JSON). Absent in runs
     * recorded before it was.
     */
    benchmarks: z.record(z.string(), z.strictObject({ problems: count, sha256 })).optional(),
    /**
     * The catalogue generation of the code that recorded the run (`runCatalogue.generation`):
     * replay expects no event of a type introduced later. Absent in runs recorded before it was
     * (generation 1).
     */
    catalogueGeneration: z.number().int().min(1).optional(),
  }).superRefine((d, ctx) => {
    let actual: string;
    try {
      actual = hashConfig(d.config);
    } catch (err) {
      const path = err instanceof CanonicalEncodingError ? err.path.split(".").filter(Boolean) : [];
      ctx.addIssue({ code: "custom", path: ["config", ...path], message: (err as Error).message });
      return;
    }
    if (actual !== d.configHash) {
      ctx.addIssue({
        code: "custom",
        path: ["configHash"],
        message: `does not match the config (hashConfig(config) is ${actual})`,
      });
    }
  }),
  coordinates: () => ({}),
});

/** A worker group's weights were created or loaded, before any update. */
export const policyInitialized = defineEvent({
  type: "policy.initialized",
  schemaVersion: 1,
  schema: z.strictObject({
    workerGroup: name,
    agents: z.array(name).min(1),
    model: name,
    /** where the weights came from: a checkpoint path, a pretraining run, "random" */
    source: z.string(),
    parameterCount: count,
    trainableParameterCount: count,
    parameterHash: sha256,
    /** blob holding the initial weights, when stored */
    blob: sha256.nullable(),
  }),
  coordinates: (d) => ({ workerGroup: d.workerGroup }),
  blobRefs: (d) => [d.blob],
});

const placement = z.strictObject({
  step: count,
  workerGroup: name,
  /** order of this load/offload within the step */
  seq: count,
  device: z.string(),
  bytes: count,
});

/** A worker group's weights were placed on the device pool. */
export const workerGroupLoaded = defineEvent({
  type: "worker_group.loaded",
  schemaVersion: 1,
  schema: placement,
  coordinates: (d) => ({ step: d.step, workerGroup: d.workerGroup, seq: d.seq }),
});

/** A worker group's weights left the device pool. */
export const workerGroupOffloaded = defineEvent({
  type: "worker_group.offloaded",
  schemaVersion: 1,
  schema: placement,
  coordinates: (d) => ({ step: d.step, workerGroup: d.workerGroup, seq: d.seq }),
});

/** A training step began with these prompt groups. */
export const stepStarted = defineEvent({
  type: "step.started",
  schemaVersion: 1,
  schema: z.strictObject({
    step: count,
    groupSize: count,
    prompts: z.array(z.strictObject({ prompt: count, problemId: z.string() })),
  }),
  coordinates: (d) => ({ step: d.step }),
});

/** One agent output: the tokens it saw and produced, with their logprobs. */
export const turnGenerated = defineEvent({
  type: "turn.generated",
  schemaVersion: 2,
  // A v1 log compares on the fields it has: replay checks what was recorded, not what was not.
  addedFields: { 2: ["role", "correct"] },
  schema: z.strictObject({
    step: count,
    phase,
    trajectory: z.string().min(1),
    /** prompt group index within the step */
    prompt: count,
    /** sample index within the prompt group */
    sample: count,
    /** turn index within the trajectory */
    turn: count,
    agent: name,
    /** the agent's role in its workflow; null in logs written before schema v2 */
    role: name.nullable(),
    workerGroup: name,
    promptTokens: tokenIds,
    responseTokens: tokenIds,
    /** one per response token */
    logprobs,
    finishReason: z.enum(["stop", "length", "abort"]),
    parsedAnswer: z.string().nullable(),
    /** the turn's own answer graded against the gold one; null when it gave none (or pre-v2) */
    correct: z.boolean().nullable(),
    text: z.string(),
  }).refine((d) => d.logprobs.length === d.responseTokens.length, {
    path: ["logprobs"],
    message: "must hold one logprob per response token",
  }),
  coordinates: (d) => ({
    step: d.step,
    phase: d.phase,
    agent: d.agent,
    prompt: d.prompt,
    sample: d.sample,
    turn: d.turn,
  }),
});

/** A trajectory (one sample of one prompt) finished. */
export const trajectoryCompleted = defineEvent({
  type: "trajectory.completed",
  schemaVersion: 2,
  schema: z.strictObject({
    step: count,
    phase,
    trajectory: z.string().min(1),
    prompt: count,
    sample: count,
    problemId: z.string(),
    /** the task's question text as the workflow received it; null in logs from before v2 */
    question: z.string().nullable(),
    /** the task's reference answer; null when it has none, or in logs from before v2 */
    gold: z.string().nullable(),
    turns: count,
    agents: z.array(name),
    finalAnswer: z.string().nullable(),
    /** graded correctness of the final answer; null when the task has no reference */
    correct: z.boolean().nullable(),
    tokens: count,
    /** "answered", "max_turns", "max_tokens", "invalid_action", ... */
    terminationReason: z.string(),
  }),
  coordinates: (d) => ({ step: d.step, phase: d.phase, prompt: d.prompt, sample: d.sample }),
  addedFields: { 2: ["question", "gold"] },
});

/** A reward for a trajectory (agent null) or for one agent in it. */
export const rewardAssigned = defineEvent({
  type: "reward.assigned",
  schemaVersion: 1,
  schema: z.strictObject({
    step: count,
    phase,
    trajectory: z.string().min(1),
    prompt: count,
    sample: count,
    agent: name.nullable(),
    components: floatRecord,
    total: float,
  }),
  coordinates: (d) => ({
    step: d.step,
    phase: d.phase,
    prompt: d.prompt,
    sample: d.sample,
    agent: d.agent,
  }),
});

/** The advantages of one prompt group and the baseline statistics they used. */
export const advantagesComputed = defineEvent({
  type: "advantages.computed",
  schemaVersion: 3,
  schema: z.strictObject({
    step: count,
    prompt: count,
    /** the config's estimator.kind: "grpo", "dr-mas", "reinforce++", "mada", ... */
    estimator: name,
    /**
     * what the statistics ranged over: this prompt group, the step's whole batch (then
     * `baseline.batch` holds them), or this group with a rule per role (MADA-RL)
     */
    scope: z.enum(["group", "batch", "role"]),
    /** population: divide by n (the papers); unbiased: divide by n - 1 (the Dr. MAS code) */
    sigmaConvention: z.enum(["population", "unbiased"]),
    eps: float,
    baseline: z.strictObject({
      /** over the group's trajectory scores, each trajectory once */
      global: baselineStats,
      /**
       * Agent k's action-weighted statistics and the Dr. MAS Lemma 4.2 multiplier
       * (sigma_k^2 + (mu_k - mu)^2) / sigma^2 (null where sigma is 0, under MADA-RL, or in
       * pre-v2 logs).
       */
      perAgent: z.record(
        z.string(),
        z.strictObject({ mu: float, sigma: float, n: count, multiplier: float.nullable() }),
      ),
      /** batch-scope statistics (n counts response tokens); null for other scopes and pre-v3 */
      batch: baselineStats.nullable(),
    }),
    advantages: z.array(z.strictObject({
      trajectory: z.string().min(1),
      sample: count,
      agent: name,
      turn: count,
      /** the action's own reward (after any penalty); null in pre-v3 logs */
      reward: float.nullable(),
      /** the value normalized: its reward, or its trajectory's score; null in pre-v3 logs */
      score: float.nullable(),
      advantage: float,
    })),
  }),
  coordinates: (d) => ({ step: d.step, prompt: d.prompt }),
});

/** One optimizer update of one worker group (skipped when the gradient was not finite). */
export const gradientStepApplied = defineEvent({
  type: "gradient_step.applied",
  schemaVersion: 2,
  schema: z.strictObject({
    step: count,
    workerGroup: name,
    /** index of this update within the step: epoch * miniBatches + miniBatch */
    update: count,
    /** the PPO epoch and the mini-batch within it of this update */
    epoch: count,
    miniBatch: count,
    /** the turns this update trained on, as (prompt, sample, turn); null in pre-v2 logs */
    rows: z.array(z.strictObject({ prompt: count, sample: count, turn: count })).nullable(),
    agents: z.array(name),
    /** loss parts: policy, kl, entropy, total, ... */
    losses: floatRecord,
    gradNormBeforeClip: float,
    gradNormAfterClip: float,
    /** per-agent gradient norms, when measured */
    agentGradNorms: floatRecord,
    clipFraction: float,
    /** token mean of old logprob - new logprob (k1 estimate of KL(old || new)) */
    kl: float,
    entropy: float,
    lr: float,
    /** the ratio's clip range [1 - low, 1 + high]; null in pre-v2 logs */
    clipLow: float.nullable(),
    clipHigh: float.nullable(),
    /** the sampling temperature the logprobs were taken at; null in pre-v2 logs (then 1) */
    temperature: float.nullable(),
    /** the LoRA dropout rate applied in this update (0 without LoRA dropout); null pre-v2 */
    loraDropout: float.nullable(),
    /** where the old logprobs came from: recomputed before the first update, or the rollout's */
    oldLogprobs: z.enum(["recompute", "rollout"]),
    /** max |recomputed - rollout| old logprob over the group's tokens; null when not recomputed */
    oldLogprobDrift: float.nullable(),
    /**
     * Turns sampled by an inference server (rollout.backend openai): how far the trainer's
     * recomputed logprobs are from the server's over the group's tokens of the step, and the
     * truncated importance sampling that corrected the policy loss; absent for local rollouts
     */
    rolloutMismatch: z.strictObject({
      tokens: count,
      /** mean and max of |trainer logprob - server logprob| */
      meanAbs: float,
      maxAbs: float,
      /** share of tokens whose |difference| exceeds `threshold` */
      threshold: float,
      overThreshold: float,
      /** the TIS cap (0: no correction), and the share of tokens whose weight it truncated */
      tisCap: float,
      tisTruncated: float,
    }).optional(),
    /**
     * What shows an off-policy update, where the run's loss computes it: the largest ratio new /
     * old over the update's loss tokens and the share of them whose loss the dual clip capped
     * (loss.clip_ratio_c set), the share whose k3 KL the clamp bounded (loss.kl_clamp set and a
     * KL term); absent otherwise, and in logs before them
     */
    maxRatio: float.optional(),
    dualClipFraction: float.optional(),
    klClampFraction: float.optional(),
    tokens: count,
    skippedNonFinite: z.boolean(),
    /** sha256 of the parameters after the update */
    parameterHash: sha256,
  }),
  coordinates: (d) => ({ step: d.step, workerGroup: d.workerGroup, update: d.update }),
});

/** A worker group's weights (and optimizer state) were written to the blob store. */
export const checkpointSaved = defineEvent({
  type: "checkpoint.saved",
  schemaVersion: 1,
  schema: z.strictObject({
    step: count,
    workerGroup: name,
    blob: sha256,
    bytes: count,
    parameterHash: sha256,
    optimizerBlob: sha256.nullable(),
    /** layout of the blob, e.g. "safetensors" */
    format: z.string(),
  }),
  coordinates: (d) => ({ step: d.step, workerGroup: d.workerGroup }),
  blobRefs: (d) => [d.blob, d.optimizerBlob],
});

/** An evaluation on one benchmark finished: per problem, n samples of which c correct. */
export const evaluationCompleted = defineEvent({
  type: "evaluation.completed",
  schemaVersion: 1,
  schema: z.strictObject({
    step: count,
    benchmark: name,
    samplesPerProblem: count,
    problems: z.array(
      z.strictObject({ problemId: z.string(), n: count, c: count }).refine((p) => p.c <= p.n, {
        path: ["c"],
        message: "correct count c exceeds sample count n",
      }),
    ),
    /** avg@k, pass@k, ... */
    metrics: floatRecord,
  }),
  coordinates: (d) => ({ step: d.step, benchmark: d.benchmark }),
});

/** The run finished normally. */
export const runCompleted = defineEvent({
  type: "run.completed",
  schemaVersion: 1,
  schema: z.strictObject({ steps: count, metrics: floatRecord }),
  coordinates: () => ({}),
});

/** The run stopped on an error, or on request (stage "interrupted": run-interruption.ts). */
export const runFailed = defineEvent({
  type: "run.failed",
  schemaVersion: 1,
  schema: z.strictObject({
    step: count.nullable(),
    /** what the run was doing: "rollout", "update", "evaluation", ..., or "interrupted" */
    stage: z.string(),
    error: z.strictObject({ name: z.string(), message: z.string() }),
  }),
  coordinates: (d) => ({ step: d.step }),
});

/** Every run event definition, in the order a run emits them, then the annotations of runs. */
export const runEventDefinitions = [
  runStarted,
  policyInitialized,
  workerGroupLoaded,
  workerGroupOffloaded,
  stepStarted,
  turnGenerated,
  trajectoryCompleted,
  rewardAssigned,
  advantagesComputed,
  gradientStepApplied,
  checkpointSaved,
  evaluationCompleted,
  runCompleted,
  runFailed,
  ...annotationEventDefinitions,
] as const;

/** Upcasters of older run event versions: old logs stay readable, with the new fields null. */
export const runEventUpcasters: readonly Upcaster[] = [
  {
    type: "turn.generated",
    fromVersion: 1,
    up: (d) => ({ ...(d as Record<string, unknown>), role: null, correct: null }),
  },
  {
    // Before v2 a trajectory did not record what it was asked, nor the reference answer.
    type: "trajectory.completed",
    fromVersion: 1,
    up: (d) => ({ ...(d as Record<string, unknown>), question: null, gold: null }),
  },
  {
    type: "advantages.computed",
    fromVersion: 1,
    up: (d) => {
      const data = d as { baseline: { perAgent: Record<string, Record<string, unknown>> } };
      const perAgent = Object.fromEntries(
        Object.entries(data.baseline.perAgent).map(([k, v]) => [k, { ...v, multiplier: null }]),
      );
      return { ...data, baseline: { ...data.baseline, perAgent } };
    },
  },
  {
    // Before v3 every estimator ran per prompt group (REINFORCE++'s batch statistics included).
    type: "advantages.computed",
    fromVersion: 2,
    up: (d) => {
      const data = d as {
        estimator: string;
        baseline: Record<string, unknown>;
        advantages: Record<string, unknown>[];
      };
      return {
        ...data,
        scope: data.estimator === "mada" ? "role" : "group",
        baseline: { ...data.baseline, batch: null },
        advantages: data.advantages.map((a) => ({ ...a, reward: null, score: null })),
      };
    },
  },
  {
    // Before v2 a step had one update per worker group, on the rollout's logprobs at T = 1.
    type: "gradient_step.applied",
    fromVersion: 1,
    up: (d) => ({
      ...(d as Record<string, unknown>),
      epoch: 0,
      miniBatch: 0,
      rows: null,
      clipLow: null,
      clipHigh: null,
      temperature: null,
      loraDropout: null,
      oldLogprobs: "rollout",
      oldLogprobDrift: null,
    }),
  },
];

/** The catalogue every store uses unless given another. */
export const runCatalogue = createCatalogue(runEventDefinitions, runEventUpcasters);

/** Any run event as appended: `{ type, data }`, discriminated on `type`. */
export type NewEvent = NonNullable<typeof runCatalogue._events>;

/** A run event type name. */
export type EventType = NewEvent["type"];

/** The data of run event type `T`. */
export type EventData<T extends EventType> = Extract<NewEvent, { type: T }>["data"];
