/**
 * Upper bounds of every count a config or a command line can set. Each is far above what an
 * experiment of this engine uses (the papers' largest settings in brackets) and low enough that
 * a typo cannot ask for arrays JavaScript cannot allocate or loops that never end: a value past
 * its bound is refused when the config is parsed, before a run is recorded.
 */

/** Training steps, and `every_steps` of evaluation and checkpoints [Dr. MAS: a few hundred]. */
export const MAX_STEPS = 1_000_000;

/** Prompts per step [Dr. MAS: 32 to 128]. */
export const MAX_BATCH_SIZE = 4096;

/** Trajectories sampled per prompt [Dr. MAS, MADA-RL: 8 to 16]. */
export const MAX_GROUP_SIZE = 1024;

/**
 * Episodes one rollout runs at once: `batch_size * group_size` of a training step, problems times
 * `n_samples` of an evaluation [MATH500 x 16 = 8000]. Every episode of a rollout, with its turns
 * and their events, is held in memory until the rollout ends.
 */
export const MAX_ROLLOUT_EPISODES = 32_768;

/** New tokens per turn; the model's context (max_position_embeddings) must also hold them. */
export const MAX_NEW_TOKENS = 32_768;

/** Samples per problem of an evaluation (`n_samples`, `eval --n`) [avg@16, pass@16]. */
export const MAX_SAMPLES = 1024;

/** Seeds of one `deno task eval` (one run each) [MADA-RL: 10]. */
export const MAX_SEEDS = 256;

/** Problems of a generated split (train, validation, test). */
export const MAX_SPLIT = 1_000_000;

/** Documents of a generated search corpus. */
export const MAX_DOCUMENTS = 100_000;

/** Agents of one config, and benchmarks of one evaluation. */
export const MAX_AGENTS = 64;
export const MAX_BENCHMARKS = 64;

/** Stop strings of the sampling settings. */
export const MAX_STOP_STRINGS = 16;

/** Intra-op threads of the runtime. */
export const MAX_THREADS = 256;

/** PPO mini-batches per rollout batch, and epochs over it. */
export const MAX_MINI_BATCHES = 1024;
export const MAX_EPOCHS = 64;

/** Inference endpoints of the openai rollout backend. */
export const MAX_ENDPOINTS = 64;

/** Completion requests in flight at once per endpoint (openai rollout backend). */
export const MAX_IN_FLIGHT = 4096;

/** Seconds one completion or adapter request may take (openai rollout backend): a day. */
export const MAX_REQUEST_SECONDS = 86_400;

/**
 * Levels of nested objects and arrays in a config file (the schema's own keys go 4 deep; the
 * free-form `workflow.params` takes the rest). Merging and validating recurse once per level, so
 * a deeper file would overflow the stack instead of being refused.
 */
export const MAX_CONFIG_DEPTH = 64;
