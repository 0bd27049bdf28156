/**
 * The experiment config file's schema (zod). Keys are snake_case as written in the JSON file;
 * every optional key has a default, so a parsed config is complete. Cross-key rules (unique ids,
 * roles per workflow, worker-group consistency, episodes per rollout) live in cross-checks.ts.
 * Every count has an upper bound (bounds.ts), so no value can hang or crash a run.
 */
import { z } from "zod";
import { DEFAULT_STORE } from "../../events/cli/command.ts";
import { ESTIMATOR_NAMES } from "../advantages/mod.ts";
import {
  MAX_AGENTS,
  MAX_BATCH_SIZE,
  MAX_BENCHMARKS,
  MAX_DOCUMENTS,
  MAX_EPOCHS,
  MAX_GROUP_SIZE,
  MAX_MINI_BATCHES,
  MAX_NEW_TOKENS,
  MAX_SAMPLES,
  MAX_SPLIT,
  MAX_STEPS,
  MAX_STOP_STRINGS,
  MAX_THREADS,
} from "./bounds.ts";

/**
 * Bumped when the meaning of a key changes, so config hashes of old and new runs differ.
 * 2: global baselines normalize trajectory scores, REINFORCE++ whitens over the batch, logprobs
 * are of the tempered policy, LoRA dropout is applied; `loss.aggregation`, the asymmetric clip
 * and `updates` are new.
 */
export const CONFIG_SCHEMA_VERSION = 2;

const ID_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/;
const id = z.string().regex(ID_PATTERN, {
  error: "an id: a lowercase letter, then up to 63 of a-z 0-9 _ -",
});
const int = (min: number, max: number) => z.number().int().min(min).max(max);
const probability = z.number().gt(0).lte(1);

const splits = z.strictObject({
  train: int(1, MAX_SPLIT),
  validation: int(0, MAX_SPLIT),
  test: int(0, MAX_SPLIT),
});

const syntheticMath = z.strictObject({
  kind: z.literal("synthetic-math"),
  /** Difficulty level of the generated problems (more steps, larger operands). */
  difficulty: int(1, 10).default(2),
  splits: splits.prefault({ train: 256, validation: 64, test: 64 }),
});

const syntheticSearch = z.strictObject({
  kind: z.literal("synthetic-search"),
  documents: int(1, MAX_DOCUMENTS).default(200),
  max_hops: int(1, 3).default(2),
  splits: splits.prefault({ train: 256, validation: 64, test: 64 }),
});

const path = z.string().min(1, { error: "a non-empty file path" });
const mathFiles = z.strictObject({
  kind: z.literal("math-files"),
  train: path,
  validation: path.optional(),
  test: path.optional(),
});

/** Where prompts come from, and how they split into train/validation/test. */
export const tasksSchema = z.discriminatedUnion("kind", [
  syntheticMath,
  syntheticSearch,
  mathFiles,
]);

/** The orchestra and its parameters. */
export const workflowSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("refine"), max_loops: int(1, 32).default(3) }),
  z.strictObject({
    kind: z.literal("search"),
    max_turns: int(1, 32).default(4),
    top_k: int(1, 50).default(3),
  }),
  z.strictObject({
    kind: z.literal("debate"),
    generators: int(1, 16).default(3),
    critics: int(0, 16).default(3),
    rounds: int(1, 8).default(2),
  }),
  z.strictObject({
    kind: z.literal("custom"),
    /** A module exporting the workflow (see the orchestra interface). */
    module: path,
    params: z.record(z.string(), z.json()).default({}),
  }),
]);

const moduleName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_.]*$/, {
  error: "a module-name suffix such as q_proj",
});

/** What of an agent's model is trained. */
export const trainableSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("lora"),
    rank: int(1, 1024).default(8),
    alpha: z.number().gt(0).default(16),
    dropout: z.number().min(0).lt(1).default(0),
    targets: z.array(moduleName).min(1).default(["q_proj", "v_proj"]),
  }),
  z.strictObject({ kind: z.literal("full") }),
  z.strictObject({ kind: z.literal("frozen") }),
]);

/** AdamW settings per agent (Dr. MAS: per-agent hyperparameters such as lr). */
export const optimizerSchema = z.strictObject({
  lr: z.number().gt(0).lte(1).default(1e-4),
  weight_decay: z.number().min(0).default(0),
  beta1: z.number().min(0).lt(1).default(0.9),
  beta2: z.number().min(0).lt(1).default(0.999),
  eps: z.number().gt(0).default(1e-8),
  max_grad_norm: z.number().gt(0).default(1),
  warmup_ratio: z.number().min(0).lt(1).default(0),
});

export const agentSchema = z.strictObject({
  id,
  /** The agent's role in its workflow: solver, verifier, searcher, answerer, generator, critic. */
  role: id,
  /** The prompt template the workflow renders ({question}, {previous}, ...). */
  prompt: z.string().min(1, { error: "a non-empty prompt template" }),
  /** "embedded" for the embedded base model, or a Hugging Face checkpoint directory. */
  model: z.string().min(1, { error: "a model name or checkpoint path" }),
  trainable: trainableSchema.prefault({ kind: "lora" }),
  optimizer: optimizerSchema.prefault({}),
});

/** Estimator names the engine knows: the advantage registry's. */
export const ESTIMATORS = ESTIMATOR_NAMES;

/** How per-token losses become one number (adapters/onnx/train-step-spec.ts LossAggregation). */
export const LOSS_AGGREGATIONS = ["token-mean", "seq-mean-token-mean", "seq-sum-const"] as const;

/** Reward components a task can compute and a config can weight. */
export const REWARD_COMPONENTS = ["accuracy", "length", "format"] as const;

/** Execution targets for the ONNX runtime. */
export const DEVICES = ["auto", "cpu", "wasm", "webgpu"] as const;

/** The whole file. */
export const experimentConfigSchema = z.strictObject({
  name: z.string().min(1).default("custom"),
  /** Any integer random streams take: [0, 2^53). */
  seed: int(0, Number.MAX_SAFE_INTEGER).default(0),
  tasks: tasksSchema,
  workflow: workflowSchema,
  agents: z.array(agentSchema).min(1).max(MAX_AGENTS),
  /**
   * "shared": agents on the same model share one worker group (weights); "separate": one per
   * agent; or an explicit map from every agent id to a worker-group id.
   */
  agent_to_wg: z.union([z.enum(["shared", "separate"]), z.record(id, id)]).default("separate"),
  estimator: z.strictObject({
    kind: z.enum(ESTIMATORS).default("dr-mas"),
    sigma: z.enum(["population", "unbiased"]).default("population"),
    eps: z.number().min(0).lte(1).default(1e-6),
  }).prefault({}),
  /** Trajectories sampled per prompt. */
  group_size: int(1, MAX_GROUP_SIZE).default(4),
  /** Prompts per step; `batch_size * group_size` is bounded too (cross-checks.ts). */
  batch_size: int(1, MAX_BATCH_SIZE).default(4),
  steps: int(0, MAX_STEPS).default(10),
  sampling: z.strictObject({
    temperature: z.number().min(0).lte(10).default(1),
    top_p: probability.default(1),
    max_tokens: int(1, MAX_NEW_TOKENS).default(256),
    stop: z.array(z.string().min(1)).max(MAX_STOP_STRINGS).default([]),
  }).prefault({}),
  loss: z.strictObject({
    /** PPO's clip range: the ratio is clipped to [1 - low, 1 + high], both clip_eps by default. */
    clip_eps: z.number().gt(0).lt(1).default(0.2),
    /** DAPO's clip-higher sets these apart (e.g. low 0.2, high 0.28). */
    clip_eps_low: z.number().gt(0).lt(1).optional(),
    clip_eps_high: z.number().gt(0).lte(10).optional(),
    kl_coef: z.number().min(0).default(0),
    /**
     * token-mean: over every loss token of the update (DAPO, veRL's default); seq-mean-token-mean:
     * per sequence, then over sequences (the GRPO paper); seq-sum-const: each sequence's token sum
     * over sampling.max_tokens, then the mean over sequences (Dr. GRPO).
     */
    aggregation: z.enum(LOSS_AGGREGATIONS).default("token-mean"),
  }).prefault({}).transform((loss) => ({
    ...loss,
    clip_eps_low: loss.clip_eps_low ?? loss.clip_eps,
    clip_eps_high: loss.clip_eps_high ?? loss.clip_eps,
  })),
  /**
   * PPO updates per rollout batch: each worker group's turns are split into `mini_batches` parts
   * (a seeded split, recorded) and passed over `epochs` times, one optimizer step per part.
   */
  updates: z.strictObject({
    mini_batches: int(1, MAX_MINI_BATCHES).default(1),
    epochs: int(1, MAX_EPOCHS).default(1),
    /**
     * recompute: the behaviour policy's logprobs are recomputed with the update's own forward
     * before the first update, as veRL's actor does, so the first ratio is exactly 1; rollout: the
     * logprobs recorded at generation.
     */
    old_logprobs: z.enum(["recompute", "rollout"]).default("recompute"),
  }).prefault({}),
  rewards: z.strictObject({
    weights: z.partialRecord(z.enum(REWARD_COMPONENTS), z.number()).prefault({ accuracy: 1 }),
    invalid_action_penalty: z.number().min(0).default(0.1),
  }).prefault({}),
  evaluation: z.strictObject({
    /** "validation", "test", or paths of benchmark files (JSONL/Parquet). */
    benchmarks: z.array(z.string().min(1)).max(MAX_BENCHMARKS).default(["validation"]),
    n_samples: int(1, MAX_SAMPLES).default(16),
    /** Evaluate every k steps; 0 evaluates only after the last step. */
    every_steps: int(0, MAX_STEPS).default(0),
  }).prefault({}),
  checkpoint: z.strictObject({ every_steps: int(1, MAX_STEPS).default(1) }).prefault({}),
  runtime: z.strictObject({
    device: z.enum(DEVICES).default("auto"),
    /** Intra-op threads; recorded for replay, so fixed rather than "auto". */
    threads: int(1, MAX_THREADS).default(1),
    /** Release idle worker groups' device memory between phases (Dr. MAS offload/resume). */
    offload_idle: z.boolean().default(false),
  }).prefault({}),
  /** A SQLite file path or a postgres:// URL. */
  store: z.string().min(1).default(DEFAULT_STORE),
});

/** What a config file may contain (before defaults). */
export type ExperimentConfigInput = z.input<typeof experimentConfigSchema>;
/** A parsed config with every default filled in. */
export type ExperimentConfig = z.output<typeof experimentConfigSchema>;
