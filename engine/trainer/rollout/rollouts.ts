/**
 * Rolling out a workflow: `n` concurrent episodes per question, every turn spoken through one
 * speaker whose draws are keyed by the episode's coordinates. Training and evaluation (in a run
 * or of a checkpoint) share it.
 */
import type { NormalizedConfig } from "../../config/mod.ts";
import type { Episode, Question, Workflow } from "../../workflows/mod.ts";
import type { EndpointPool } from "./endpoint-pool.ts";
import { createOpenAISpeaker } from "./openai-speaker.ts";
import type { GroupPolicy } from "./policy-pool.ts";
import type { ServedAdapters } from "./served-adapters.ts";
import { type RecordedTurns, type ReplayRollouts, replaySpeaker } from "./recorded-turns.ts";
import type { RolloutEngine } from "./engine-dialect.ts";
import { createSpeaker, type SpeakingPolicy, type TurnRecord } from "./speaker.ts";

/** A rollout's phase: trained on, or only measured. */
export type Phase = "rollout" | "eval";

/** The episodes sampled for one question. */
export type Rollout = { question: Question; episodes: Episode<TurnRecord>[] };

/** Rolls out `n` episodes of each question at step `at`; prompt index = position. */
export type RolloutFn = (
  phase: Phase,
  at: number,
  questions: readonly Question[],
  n: number,
) => Promise<Rollout[]>;

/**
 * Where a step's jobs tell rollout workers to find the weights that sample it: the adapter names
 * the servers hold (the openai backend), or the trainable groups' parameters and optimizer state
 * as blobs in the run's store (the local backend: each worker restores them into its own copy).
 */
export type StepWeights =
  | { readonly kind: "served"; readonly served: Pick<ServedAdapters, "modelOf"> }
  | { readonly kind: "blobs"; readonly putBlob: (bytes: Uint8Array) => Promise<string> };

/**
 * Plays a run's episodes in other processes (`rollout.dispatch` "workers"): the rollout function,
 * and what to close after the run. engine/workers' `workerRollouts` is one; whoever starts a run
 * hands it to the training loop (deno task train does), which depends on no dispatcher itself.
 */
export type RolloutDispatch = (
  config: NormalizedConfig,
  workflow: Workflow,
  groups: ReadonlyMap<string, GroupPolicy>,
  runId: string,
  weights: StepWeights,
) => Promise<{ rollout: RolloutFn } & AsyncDisposable>;

/**
 * Rows decoding or queued at once, all worker groups together: large enough to batch a step,
 * small enough for the caches (every group's is alive at once).
 */
const MAX_GENERATION_BATCH = 64;

/**
 * The rollout function of a config's workflow on `groups`, sampling as the config says.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../../config/mod.ts";
 * import type { Question, Workflow } from "../../workflows/mod.ts";
 * import type { GroupPolicy } from "./policy-pool.ts";
 * import { workflowRollouts } from "./rollouts.ts";
 *
 * declare const config: NormalizedConfig;
 * declare const workflow: Workflow;
 * declare const policies: ReadonlyMap<string, GroupPolicy>; // each worker group's policy
 * declare const questions: readonly Question[]; // the step's prompts
 * const rollouts = workflowRollouts(config, workflow, policies);
 * const groups = await rollouts("rollout", 0, questions, config.group_size);
 * ```
 */
export function workflowRollouts(
  config: Pick<NormalizedConfig, "seed" | "sampling" | "agent_to_wg">,
  workflow: Workflow,
  groups: ReadonlyMap<string, SpeakingPolicy>,
  options: {
    /** Called as each episode ends (progress). */
    readonly onEpisode?: () => void;
    /** Continuous batching (default true); false batches whole waves of turns (comparison). */
    readonly continuous?: boolean;
    /** Turns are completion requests to these servers (the openai backend) instead. */
    readonly servers?: {
      readonly endpoints: EndpointPool;
      readonly served: ServedAdapters;
      readonly engine: RolloutEngine | undefined;
    };
    /** A replay's turns: re-sampled and checked against the log, or taken from it as given. */
    readonly replay?: { readonly mode: ReplayRollouts; readonly turns: RecordedTurns };
  } = {},
): RolloutFn {
  const sampling = {
    seed: config.seed,
    temperature: config.sampling.temperature,
    topP: config.sampling.top_p,
    maxTokens: config.sampling.max_tokens,
    stop: config.sampling.stop,
  };
  const local = () =>
    createSpeaker(groups, config.agent_to_wg, {
      ...sampling,
      maxBatch: MAX_GENERATION_BATCH,
      continuous: options.continuous,
    });
  const speaker = options.replay
    ? replaySpeaker(
      options.replay.mode,
      options.replay.turns,
      groups,
      config.agent_to_wg,
      sampling,
      local(),
    )
    : options.servers
    ? createOpenAISpeaker(
      groups,
      config.agent_to_wg,
      sampling,
      options.servers.endpoints,
      options.servers.served,
      options.servers.engine,
    )
    : local();
  return (phase, at, questions, n) =>
    Promise.all(questions.map(async (question, prompt): Promise<Rollout> => ({
      question,
      episodes: await Promise.all(Array.from({ length: n }, async (_, sample) => {
        const episode = await speaker.episode(
          { phase, step: at, prompt, sample },
          (speak) => workflow.run(question, speak),
        );
        options.onEpisode?.();
        return episode;
      })),
    })));
}
