/**
 * The experiment config file's schema (zod). Keys are snake_case as written in the JSON file;
 * every optional key has a default, so a parsed config is complete. Cross-key rules (unique ids,
 * worker-group consistency, episodes per rollout) live in cross-checks.ts; the roles a workflow
 * needs are checked against its own declaration when it is built (engine/workflows/roles.ts).
 * Every count has an upper bound (bounds.ts), so no value can hang or crash a run.
 */
import { z } from "zod";
import { FUSED_OPS } from "../../adapters/model/mod.ts";
import { DEFAULT_STORE } from "../../events/cli/mod.ts";
import { parseStoreTarget } from "../../events/mod.ts";
import { DEFAULT_ESTIMATOR, ESTIMATOR_NAMES } from "../advantages/mod.ts";
import {
  MAX_AGENTS,
  MAX_BATCH_SIZE,
  MAX_BENCHMARKS,
  MAX_DOCUMENTS,
  MAX_ENDPOINTS,
  MAX_EPOCHS,
  MAX_GROUP_SIZE,
  MAX_IN_FLIGHT,
  MAX_MINI_BATCHES,
  MAX_NEW_TOKENS,
  MAX_REQUEST_SECONDS,
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
 * 3: `rloo` and `reinforce++` take the Dr. MAS code's numerators (each action's own score against
 * the mean first-action score); the schema-2 forms are `rloo-trajectory` and
 * `reinforce++-trajectory`; generated tasks take their problems from `tasks.seed` (default 0), not
 * the run's seed; `loss.clip_ratio_c`, `loss.kl_clamp` (on, as veRL), `loss.entropy_coeff`,
 * `updates.micro_batch_size` and the aggregations seq-mean-token-sum(-norm) are new. Schema-2 runs of other estimators are read as schema 3, the new loss terms off (upcast.ts).
 */
export const CONFIG_SCHEMA_VERSION = 3;

const ID_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/;
const id = z.string().regex(ID_PATTERN, {
  error: "an id: a lowercase letter, then up to 63 of a-z 0-9 _ -",
});
const int = (min: number, max: number) => z.number().int().min(min).max(max);
const probability = z.number().gt(0).lte(1);

const splits = z.strictObject({
  train: int(1, MAX_SPLIT).describe("problems generated for training"),
  validation: int(0, MAX_SPLIT).describe("held-out problems the evaluation's `validation` uses"),
  test: int(0, MAX_SPLIT).describe("held-out problems the evaluation's `test` uses"),
}).describe("problems per split, generated from the seed");

/**
 * The problem set of a generated task kind is its own seed's, not the run's: runs of every seed
 * train and evaluate on the same problems unless a config asks otherwise, so the spread between
 * seeds is the spread of training, not of benchmarks (the run's seed orders and samples).
 */
const problemSetSeed = int(0, Number.MAX_SAFE_INTEGER).default(0).describe(
  "seed of the generated problem set (every split); the same for every run seed unless set",
);

const syntheticMath = z.strictObject({
  kind: z.literal("synthetic-math").describe("generated arithmetic word problems"),
  difficulty: int(1, 10).default(2).describe(
    "difficulty of the generated problems (more steps, larger operands)",
  ),
  seed: problemSetSeed,
  splits: splits.prefault({ train: 256, validation: 64, test: 64 }),
});

const syntheticSearch = z.strictObject({
  kind: z.literal("synthetic-search").describe(
    "generated multi-hop questions over a generated document collection (BM25 retrieval)",
  ),
  documents: int(1, MAX_DOCUMENTS).default(200).describe("documents in the generated collection"),
  max_hops: int(1, 3).default(2).describe(
    "facts a question chains, at most (3 adds regions: person, city, country, region)",
  ),
  // Optional without a default, so that configs (and hashes) of runs before it stay the same.
  min_hops: int(1, 3).optional().describe(
    "facts a question chains, at least (default 1; 2 leaves out one-hop questions)",
  ),
  seed: problemSetSeed,
  splits: splits.prefault({ train: 256, validation: 64, test: 64 }),
});

const path = z.string().min(1, { error: "a non-empty file path" });
const mathFiles = z.strictObject({
  kind: z.literal("math-files").describe("math problems with gold answers read from files"),
  train: path.describe("JSONL, JSON or Parquet file of training problems (question, answer)"),
  validation: path.optional().describe("file of validation problems, same format"),
  test: path.optional().describe("file of test problems, same format"),
});

/** Where prompts come from, and how they split into train/validation/test. */
export const tasksSchema = z.discriminatedUnion("kind", [
  syntheticMath,
  syntheticSearch,
  mathFiles,
]);

/** The orchestra and its parameters. */
export const workflowSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("refine").describe("a solver answers, a verifier accepts or asks to revise"),
    max_loops: int(1, 32).default(3).describe("solver-verifier rounds before the answer stands"),
  }),
  z.strictObject({
    kind: z.literal("search").describe(
      "a router decides search or answer, a searcher writes queries, an answerer answers",
    ),
    max_turns: int(1, 32).default(4).describe("router turns before the answerer must answer"),
    top_k: int(1, 50).default(3).describe("documents retrieved per search query"),
  }),
  z.strictObject({
    kind: z.literal("debate").describe(
      "generators answer, critics revise over the others' answers",
    ),
    generators: int(1, 16).default(3).describe("agents answering first"),
    critics: int(0, 16).default(3).describe("agents revising in each later round"),
    rounds: int(1, 8).default(2).describe("rounds, the generators' included"),
  }),
  z.strictObject({
    kind: z.literal("custom").describe("a workflow from your own module"),
    /**
     * A module default-exporting `(agents, params) => Workflow` (engine/workflows/mod.ts); in a
     * config file, a relative path is taken from the file's folder.
     */
    module: path.describe(
      "module default-exporting the workflow; a relative path is from the config file's folder",
    ),
    params: z.record(z.string(), z.json()).default({}).describe(
      "JSON parameters handed to the module's workflow",
    ),
  }),
]);

const moduleName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_.]*$/, {
  error: "a module-name suffix such as q_proj",
});

/** What of an agent's model is trained. */
export const trainableSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("lora").describe("a LoRA adapter is trained; the base weights stay"),
    rank: int(1, 1024).default(8).describe("LoRA rank r"),
    alpha: z.number().gt(0).default(16).describe("LoRA alpha: the update is scaled by alpha / r"),
    dropout: z.number().min(0).lt(1).default(0).describe("dropout on the adapter's input"),
    targets: z.array(moduleName).min(1).default(["q_proj", "v_proj"]).describe(
      "module-name suffixes that get an adapter",
    ),
  }),
  z.strictObject({ kind: z.literal("full").describe("every weight is trained") }),
  z.strictObject({ kind: z.literal("frozen").describe("nothing is trained (a fixed agent)") }),
]);

/** AdamW settings per agent (Dr. MAS: per-agent hyperparameters such as lr). */
export const optimizerSchema = z.strictObject({
  lr: z.number().gt(0).lte(1).default(1e-4).describe("peak learning rate"),
  weight_decay: z.number().min(0).default(0).describe("AdamW's decoupled weight decay"),
  beta1: z.number().min(0).lt(1).default(0.9).describe("AdamW's first-moment decay"),
  beta2: z.number().min(0).lt(1).default(0.999).describe("AdamW's second-moment decay"),
  eps: z.number().gt(0).default(1e-8).describe("AdamW's denominator epsilon"),
  max_grad_norm: z.number().gt(0).default(1).describe("gradients are clipped to this global norm"),
  warmup_ratio: z.number().min(0).lt(1).default(0).describe(
    "fraction of the steps with a linear learning-rate warmup",
  ),
});

export const agentSchema = z.strictObject({
  id: id.describe("the agent's id, unique in the config"),
  role: id.describe(
    "its role in the workflow: solver, verifier, router, searcher, answerer, generator, critic",
  ),
  prompt: z.string().min(1, { error: "a non-empty prompt template" }).describe(
    "the prompt template the workflow fills ({question}, {previous}, ...)",
  ),
  model: z.string().min(1, { error: "a model name or checkpoint path" }).describe(
    '"embedded" (the embedded base model) or a Hugging Face checkpoint directory',
  ),
  trainable: trainableSchema.prefault({ kind: "lora" }).describe("what of the model is trained"),
  optimizer: optimizerSchema.prefault({}).describe("AdamW settings of this agent"),
});

/** Estimator names the engine knows: the advantage registry's. */
export const ESTIMATORS = ESTIMATOR_NAMES;

/** How per-token losses become one number (adapters/onnx/train-step/spec.ts LossAggregation). */
export const LOSS_AGGREGATIONS = [
  "token-mean",
  "seq-mean-token-sum",
  "seq-mean-token-mean",
  "seq-mean-token-sum-norm",
  "seq-sum-const",
] as const;

/** Reward components a task can compute and a config can weight. */
export const REWARD_COMPONENTS = ["accuracy", "length", "format"] as const;

/** Execution targets for the ONNX runtime. */
export const DEVICES = ["auto", "cpu", "wasm", "webgpu", "webgpu-web"] as const;

/** Where agent turns are generated (docs/SCALE-OUT.md, "The rollout backend"). */
export const ROLLOUT_BACKENDS = ["local", "openai"] as const;

/**
 * The inference engine the openai backend's servers run, which names their routes
 * (docs/SCALE-OUT.md, "vLLM and SGLang"): vllm (and deno task serve) or sglang.
 */
export const ROLLOUT_ENGINES = ["vllm", "sglang"] as const;

/** Who plays a step's episodes (docs/SCALE-OUT.md, "Rollout workers over Postgres"). */
export const ROLLOUT_DISPATCH = ["trainer", "workers"] as const;

const endpointUrl = z.url({ protocol: /^https?$/, error: "an http:// or https:// URL" });

/**
 * The rollout backend. Optional, so that configs (and config hashes) of runs without it stay
 * what they were: absent is the local backend.
 */
export const rolloutSchema = z.strictObject({
  backend: z.enum(ROLLOUT_BACKENDS).default("local").describe(
    "local: turns are sampled in the training process; openai: each turn is a completion " +
      "request to an OpenAI-compatible server (deno task serve, vLLM, SGLang)",
  ),
  endpoints: z.array(endpointUrl).max(MAX_ENDPOINTS).default([]).describe(
    "the servers' base URLs (e.g. http://127.0.0.1:8000); a turn goes to the one with the " +
      "fewest requests in flight",
  ),
  api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
    error: "an environment variable's name",
  }).optional().describe(
    "environment variable holding the servers' API key, sent as a bearer token",
  ),
  timeout_s: z.number().gt(0).lte(MAX_REQUEST_SECONDS).default(600).describe(
    "seconds one request may take before the run fails naming the endpoint",
  ),
  max_in_flight: int(1, MAX_IN_FLIGHT).default(64).describe(
    "completion requests in flight at once per endpoint",
  ),
  adapter_dir: z.string().min(1).optional().describe(
    "a folder every server can read (vLLM: any path; deno task serve: under its --lora-dir) " +
      "where each LoRA group's adapter is written after each update, as <group>-v<update>",
  ),
  // Optional without a default, so that configs (and hashes) of runs before it stay the same.
  engine: z.enum(ROLLOUT_ENGINES).optional().describe(
    "the servers' engine, which names the routes a turn and an adapter load use: vllm (absent: " +
      "POST /v1/completions with return_token_ids, /v1/load_lora_adapter; also deno task " +
      "serve) or sglang (POST /generate with input_ids, return_logprob and lora_path, " +
      "/load_lora_adapter)",
  ),
  // Optional without a default, as engine is.
  dispatch: z.enum(ROLLOUT_DISPATCH).optional().describe(
    "who plays a step's episodes: trainer (absent: the training process) or workers (deno " +
      "task worker processes taking them from a queue in the run's Postgres store; with the " +
      "local backend they sample with the weights the trainer puts in the store's blobs)",
  ),
  tis_cap: z.number().min(0).lte(1000).default(2).describe(
    "truncated importance sampling: each token's policy loss is weighted by " +
      "min(exp(trainer logprob - server logprob), tis_cap); 0 turns it off",
  ),
}).describe("where rollouts are generated");

/** An event store (events/store/store-target.ts): any other URL scheme would become a file. */
const storeTarget = z.string().refine((text) => {
  try {
    parseStoreTarget(text);
    return true;
  } catch {
    return false;
  }
}, { error: "an SQLite file path or a postgres:// (postgresql://) URL" });

/** The whole file. */
export const experimentConfigSchema = z.strictObject({
  name: z.string().min(1).default("custom").describe("the experiment's name, shown with its runs"),
  seed: int(0, Number.MAX_SAFE_INTEGER).default(0).describe(
    "seed of every random stream (any integer in [0, 2^53))",
  ),
  tasks: tasksSchema.describe("where prompts come from, and their train/validation/test splits"),
  workflow: workflowSchema.describe("the orchestra the agents play in, and its parameters"),
  agents: z.array(agentSchema).min(1).max(MAX_AGENTS).describe("the agents, in workflow order"),
  agent_to_wg: z.union([z.enum(["shared", "separate"]), z.record(id, id)]).default("separate")
    .describe(
      "worker groups (trained weights): shared per model, separate per agent, or a map " +
        "from every agent id to a group id",
    ),
  estimator: z.strictObject({
    kind: z.enum(ESTIMATORS).default(DEFAULT_ESTIMATOR).describe(
      "advantage estimator (deno task train --help lists them)",
    ),
    sigma: z.enum(["population", "unbiased"]).default("population").describe(
      "standard deviation of a normalization: population (n) or unbiased (n - 1)",
    ),
    eps: z.number().min(0).lte(1).default(1e-6).describe("added to a std before dividing by it"),
  }).prefault({}).describe("how rewards become advantages"),
  group_size: int(1, MAX_GROUP_SIZE).default(4).describe("trajectories sampled per prompt"),
  batch_size: int(1, MAX_BATCH_SIZE).default(4).describe(
    "prompts per step (batch_size * group_size is bounded too)",
  ),
  steps: int(0, MAX_STEPS).default(10).describe(
    "training steps (rollout, then updates); 0 only evaluates the initial team",
  ),
  sampling: z.strictObject({
    temperature: z.number().min(0).lte(10).default(1).describe("sampling temperature; 0 is greedy"),
    top_p: probability.default(1).describe("nucleus sampling: the smallest top set of this mass"),
    max_tokens: int(1, MAX_NEW_TOKENS).default(256).describe("new tokens per turn, at most"),
    stop: z.array(z.string().min(1)).max(MAX_STOP_STRINGS).default([]).describe(
      "strings that end a turn",
    ),
  }).prefault({}).describe("how turns are sampled in rollouts"),
  loss: z.strictObject({
    clip_eps: z.number().gt(0).lt(1).default(0.2).describe(
      "PPO clip range: the ratio is clipped to [1 - low, 1 + high], both clip_eps by default",
    ),
    clip_eps_low: z.number().gt(0).lt(1).optional().describe(
      "lower clip range (default clip_eps); DAPO's clip-higher sets low and high apart",
    ),
    clip_eps_high: z.number().gt(0).lte(10).optional().describe(
      "upper clip range (default clip_eps), e.g. 0.28 with low 0.2",
    ),
    kl_coef: z.number().min(0).default(0).describe(
      "weight of the KL penalty to the initial policy; 0 loads no reference",
    ),
    // veRL's ppo_trainer.yaml line 57 (clip_ratio_c: 3.0), core_algos.py lines 880-885. Off is
    // 0, not null: a null in a config that extends a preset removes the key (merge.ts), and the
    // default would apply again.
    clip_ratio_c: z.union([z.literal(0), z.number().gt(1).lte(1000)]).default(3).describe(
      "dual-clip PPO: a negative-advantage token's loss is at most -A * clip_ratio_c, so a " +
        "ratio past it adds no gradient; 0 turns it off",
    ),
    // veRL's kl_penalty clamps low_var_kl (k3) to [-10, 10] (core_algos.py line 969).
    kl_clamp: z.number().min(0).lte(1000).default(10).describe(
      "each token's k3 KL estimate is clamped to [-kl_clamp, kl_clamp] (no gradient beyond); " +
        "0 turns it off",
    ),
    entropy_coeff: z.number().min(0).lte(1).default(0).describe(
      "the loss subtracts this times the policy's entropy, aggregated as the policy loss is " +
        "(veRL's entropy_coeff)",
    ),
    /**
     * veRL's loss_agg_mode names (core_algos.py agg_loss): token-mean over every loss token (DAPO,
     * veRL's default); seq-mean-token-sum, each sequence's token sum, then the mean over
     * sequences; seq-mean-token-mean, per sequence, then over sequences (the GRPO paper);
     * seq-mean-token-sum-norm, the sum of every sequence's token sum over sampling.max_tokens.
     * seq-sum-const is TRL's Dr. GRPO: each sequence's token sum over sampling.max_tokens, then the
     * mean over sequences. Over each update's mini-batch, or each updates.micro_batch_size rows.
     */
    aggregation: z.enum(LOSS_AGGREGATIONS).default("token-mean").describe(
      "how per-token losses become one (veRL's loss_agg_mode): token-mean (DAPO), " +
        "seq-mean-token-sum, seq-mean-token-mean (GRPO), seq-mean-token-sum-norm (veRL's Dr. " +
        "GRPO, over sampling.max_tokens), seq-sum-const (TRL's Dr. GRPO)",
    ),
  }).prefault({}).transform((loss) => ({
    ...loss,
    clip_eps_low: loss.clip_eps_low ?? loss.clip_eps,
    clip_eps_high: loss.clip_eps_high ?? loss.clip_eps,
  })).describe("the policy loss"),
  /**
   * PPO updates per rollout batch: each worker group's turns are split into `mini_batches` parts
   * (a seeded split, recorded) and passed over `epochs` times, one optimizer step per part.
   */
  updates: z.strictObject({
    mini_batches: int(1, MAX_MINI_BATCHES).default(1).describe(
      "parts each worker group's turns are split into (seeded), one optimizer step each",
    ),
    epochs: int(1, MAX_EPOCHS).default(1).describe("passes over the rollout batch"),
    /**
     * recompute: the behaviour policy's logprobs are recomputed with the update's own forward
     * before the first update, as veRL's actor does, so the first ratio is exactly 1; rollout: the
     * logprobs recorded at generation.
     */
    old_logprobs: z.enum(["recompute", "rollout"]).default("recompute").describe(
      "behaviour logprobs: recomputed before the first update (ratio 1), or as sampled",
    ),
    // veRL's actor aggregates the loss per micro-batch and divides by mini // micro (dp_actor.py
    // lines 358-360, 428): token-mean weighs a token by its own micro-batch's token count.
    micro_batch_size: int(1, MAX_BATCH_SIZE).nullable().default(null).describe(
      "turns per loss micro-batch (veRL's ppo_micro_batch_size_per_gpu): the loss is " +
        "aggregated over each and scaled by 1 / (mini-batch turns // micro_batch_size); null: " +
        "over the whole mini-batch",
    ),
  }).prefault({}).describe("PPO updates per rollout batch"),
  rewards: z.strictObject({
    weights: z.partialRecord(z.enum(REWARD_COMPONENTS), z.number()).prefault({ accuracy: 1 })
      .describe(`weight of each reward component (${REWARD_COMPONENTS.join(", ")})`),
    invalid_action_penalty: z.number().min(0).default(0.1).describe(
      "subtracted from the reward of a turn the workflow cannot parse",
    ),
  }).prefault({}).describe("how a trajectory's reward is computed"),
  evaluation: z.strictObject({
    benchmarks: z.array(z.string().min(1)).max(MAX_BENCHMARKS).default(["validation"]).describe(
      '"validation", "test", or paths of benchmark files (JSONL/Parquet)',
    ),
    n_samples: int(1, MAX_SAMPLES).default(16).describe("samples per problem (avg@k, pass@k)"),
    every_steps: int(0, MAX_STEPS).default(0).describe(
      "evaluate every k steps; 0 evaluates only after the last step; a run of 0 steps " +
        "evaluates its initial team once, at step 0",
    ),
  }).prefault({}).describe("evaluation during and after training"),
  checkpoint: z.strictObject({
    every_steps: int(1, MAX_STEPS).default(1).describe(
      "a checkpoint (resume point) every k steps, and after the last",
    ),
  }).prefault({}).describe("checkpoints in the store"),
  rollout: rolloutSchema.optional(),
  runtime: z.strictObject({
    device: z.enum(DEVICES).default("auto").describe("ONNX runtime backend"),
    threads: int(1, MAX_THREADS).default(1).describe(
      'intra-op threads; recorded for replay, so fixed rather than "auto"',
    ),
    offload_idle: z.boolean().default(false).describe(
      "release idle worker groups' device memory between phases (Dr. MAS offload)",
    ),
    fused_ops: z.array(z.enum(FUSED_OPS)).default([]).describe(
      "parts built as fewer onnxruntime nodes: rms_norm (SimplifiedLayerNormalization " +
        "for 7 nodes), rotary_embedding (RotaryEmbedding for 8), attention (GroupQueryAttention " +
        "in the webgpu backends' decode step, for 14 a layer; head_dim a multiple of 8), " +
        "grad_norm (the train step's gradient norm per stacked group, not per tensor); " +
        "fewer GPU dispatches, values differ from the composed form's in the low bits",
    ),
  }).prefault({}).describe("where and how the models run"),
  store: storeTarget.default(DEFAULT_STORE).describe(
    "event store: a SQLite file path or a postgres:// URL",
  ),
});

/** What a config file may contain (before defaults). */
export type ExperimentConfigInput = z.input<typeof experimentConfigSchema>;
/** A parsed config with every default filled in. */
export type ExperimentConfig = z.output<typeof experimentConfigSchema>;
