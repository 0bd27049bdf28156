/**
 * A rollout worker (`deno task worker`): takes episodes from the queue of a Postgres store, plays
 * each with its run's workflow and keeps its turns in the played-episodes table. With the openai
 * backend it speaks to the inference servers (the openai backend's speaker: keyed draw
 * coordinates, the adapter version the trainer named in the job); with the local backend it
 * samples with its own copy of the run's worker groups (the local speaker, continuous batching
 * over the episodes it plays at once), restored from the weights the job names in the store's
 * blobs. What it needs of a run (config, workflow, tokenizers or models) it reads once from the
 * run's log, so one worker serves any number of runs of the store.
 */
import { loadHfModel } from "../../adapters/hf/mod.ts";
import {
  currentEmbeddedVersion,
  decoderSpec,
  type EmbeddedVersion,
  loadEmbeddedModel,
} from "../../adapters/model/mod.ts";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { type EventStore, openStore } from "../../events/mod.ts";
import type { NormalizedConfig } from "../config/mod.ts";
import { buildWorkflow, type Episode, type Workflow } from "../workflows/mod.ts";
import {
  createOpenAISpeaker,
  createSpeaker,
  endpointPool,
  openPolicyPool,
  policyPoolOptions,
  type SpeakingPolicy,
  taskSource,
  type TurnRecord,
} from "../trainer/rollout/mod.ts";
import { readRunLog, recordedEmbedded } from "../trainer/run-log/mod.ts";
import { type EpisodeJob, openEpisodeQueue } from "./episode-queue.ts";
import { openPlayedEpisodes } from "./played-episodes.ts";

/** What a worker holds of one run: how to play one of its episodes. */
interface RunContext {
  play(job: EpisodeJob): Promise<Episode<TurnRecord>>;
  release(): Promise<void>;
}

/** One played episode, for the worker's log lines. */
export interface PlayedNote {
  readonly job: EpisodeJob;
  readonly turns: number;
  readonly ms: number;
  /** false when another attempt's copy was already kept (this one was dropped) */
  readonly kept: boolean;
}

/** Options of `runWorker`. */
export interface WorkerOptions {
  /**
   * The store's URL (with its password): the queue lives in its database, and runs' configs are
   * read from the store, opened read-only at the first job (a worker may start before any run).
   */
  readonly storeUrl: string;
  /** Servers to send turns to instead of the run's `rollout.endpoints`. */
  readonly endpoints?: readonly string[];
  /** Episodes played at once. */
  readonly concurrency: number;
  /** Stops taking episodes; those being played finish first. */
  readonly signal: AbortSignal;
  readonly onPlayed?: (note: PlayedNote) => void;
  readonly onFailed?: (job: EpisodeJob, err: Error) => void;
  /** A job in the queue that is not an episode (failed without being played). */
  readonly onMalformed?: (err: Error) => void;
  /** Called once the worker listens for jobs. */
  readonly onReady?: () => void;
}

/**
 * Plays episodes until `signal` aborts.
 *
 * @example
 * ```ts
 * import { runWorker } from "./rollout-worker.ts";
 *
 * const controller = new AbortController();
 * Deno.addSignalListener("SIGINT", () => controller.abort());
 * await runWorker({
 *   storeUrl: "postgres://polyrl@db.lab/runs",
 *   concurrency: 4,
 *   signal: controller.signal,
 * });
 * ```
 */
export async function runWorker(options: WorkerOptions): Promise<void> {
  const me = `${Deno.hostname()}:${Deno.pid}`;
  const queue = await openEpisodeQueue(options.storeUrl, { supervise: false });
  let store: Promise<EventStore> | undefined;
  const runs = new Map<string, Promise<RunContext>>();
  try {
    await using played = await openPlayedEpisodes(queue.connectionString, queue.schema);
    const contextOf = (runId: string) => {
      let ctx = runs.get(runId);
      if (!ctx) {
        store ??= openStore(options.storeUrl, { readOnly: true });
        store.catch(() => store = undefined);
        ctx = store.then((s) => runContext(s, runId, options.endpoints));
        // A run that could not be read is tried afresh for its next job.
        ctx.catch(() => runs.delete(runId));
        runs.set(runId, ctx);
      }
      return ctx;
    };
    await queue.work(options.concurrency, async (job) => {
      const started = performance.now();
      try {
        const episode = await (await contextOf(job.runId)).play(job);
        const turns = episode.turns.map((t) => ({
          turn: t.turn,
          text: t.output.text,
          extra: t.output.extra,
        }));
        const kept = await played.record(job, turns, me);
        options.onPlayed?.({ job, turns: turns.length, ms: performance.now() - started, kept });
      } catch (err) {
        options.onFailed?.(job, err as Error);
        throw err;
      }
    }, (err) => options.onMalformed?.(err));
    options.onReady?.();
    await new Promise<void>((resolve) => {
      if (options.signal.aborted) resolve();
      options.signal.addEventListener("abort", () => resolve(), { once: true });
    });
  } finally {
    await queue.stop();
    for (const ctx of runs.values()) await (await ctx.catch(() => undefined))?.release();
    await (await store?.catch(() => undefined))?.close();
  }
}

/** A run's config, workflow and way of sampling, from its log. */
async function runContext(
  store: EventStore,
  runId: string,
  endpoints: readonly string[] | undefined,
): Promise<RunContext> {
  const log = await readRunLog(store, runId);
  const config = log.config;
  if (config.rollout?.dispatch !== "workers") {
    throw new Error(`run ${runId} does not dispatch its rollouts to workers; nothing to play`);
  }
  const embedded = await recordedEmbedded(log.events, runId) ?? await currentEmbeddedVersion();
  const tasks = await taskSource(config);
  const workflow = await buildWorkflow(config, tasks.retriever);
  return config.rollout.backend === "openai"
    ? await servedContext(config, workflow, embedded, endpoints)
    : await localContext(config, workflow, embedded, store);
}

/** Episodes played against the servers, each turn with the adapter the job names. */
async function servedContext(
  config: NormalizedConfig,
  workflow: Workflow,
  embedded: EmbeddedVersion,
  endpoints: readonly string[] | undefined,
): Promise<RunContext> {
  const groups = new Map<string, Pick<SpeakingPolicy, "id" | "spec" | "tokenizer">>();
  for (const wg of config.worker_groups) {
    const model = wg.model === "embedded"
      ? await loadEmbeddedModel(embedded.dir)
      : await loadHfModel(wg.model);
    if (!model.tokenizer) throw new Error(`model ${wg.model} has no tokenizer.json`);
    groups.set(wg.id, {
      id: wg.id,
      spec: decoderSpec(model.config, null),
      tokenizer: model.tokenizer,
    });
  }
  const bases = Object.fromEntries(config.worker_groups.map((wg) => [wg.id, wg.model]));
  const rollout = endpoints?.length
    ? { ...config.rollout!, endpoints: [...endpoints] }
    : config.rollout!;
  const pool = endpointPool(rollout);
  return {
    play(job) {
      const speaker = createOpenAISpeaker(
        groups,
        config.agent_to_wg,
        samplingOf(config),
        pool,
        { modelOf: (wg) => job.models[wg], baseOf: (wg) => bases[wg] },
        config.rollout!.engine,
      );
      return speaker.episode(job, (speak) => workflow.run(job.question, speak));
    },
    release: () => Promise.resolve(),
  };
}

/**
 * Episodes sampled here with the run's worker groups, on the run's device: one local speaker, so
 * the episodes this worker plays at once share each group's decode batch. A job naming other
 * weights than those loaded waits until the episodes on the loaded ones have ended, then restores
 * the named blobs (every job of a step names the same).
 */
async function localContext(
  config: NormalizedConfig,
  workflow: Workflow,
  embedded: EmbeddedVersion,
  store: EventStore,
): Promise<RunContext> {
  const runtime = await openRuntime(config.runtime.device, { threads: config.runtime.threads });
  // A worker plays episodes and loads no KL reference.
  const pool = await openPolicyPool(runtime, config.worker_groups, {
    ...policyPoolOptions(config),
    klCoef: 0,
    embedded,
  }).catch(async (err) => {
    await runtime.close();
    throw err;
  });
  const speaker = createSpeaker(pool.groups, config.agent_to_wg, {
    ...samplingOf(config),
    maxBatch: 64,
  });
  const gate = weightGate(async (weights: EpisodeJob["weights"]) => {
    for (const [wg, blobs] of Object.entries(weights)) {
      const policy = pool.groups.get(wg);
      if (!policy) throw new Error(`the job names weights of ${wg}, which the run has not`);
      await policy.restore(
        await store.blobs.get(blobs.parameters),
        await store.blobs.get(blobs.optimizer),
      );
    }
  });
  return {
    async play(job) {
      await gate.enter(job.weights);
      try {
        return await speaker.episode(job, (speak) => workflow.run(job.question, speak));
      } finally {
        gate.leave();
      }
    },
    async release() {
      await pool.release();
      await runtime.close();
    },
  };
}

/** The speaker settings of a run's config. */
function samplingOf(config: NormalizedConfig) {
  return {
    seed: config.seed,
    temperature: config.sampling.temperature,
    topP: config.sampling.top_p,
    maxTokens: config.sampling.max_tokens,
    stop: config.sampling.stop,
  };
}

/**
 * Lets episodes run on one set of weights at a time: `enter` with other weights waits until no
 * episode is in flight, then loads them.
 */
function weightGate<W>(load: (weights: W) => Promise<void>) {
  let loaded: string | null = null;
  let inFlight = 0;
  let switching: Promise<void> | null = null;
  const idle: (() => void)[] = [];
  return {
    async enter(weights: W): Promise<void> {
      const key = JSON.stringify(weights);
      for (;;) {
        if (switching) {
          await switching.catch(() => {});
          continue;
        }
        if (key === loaded) {
          inFlight++;
          return;
        }
        if (inFlight > 0) {
          await new Promise<void>((resolve) => idle.push(resolve));
          continue;
        }
        switching = load(weights).then(() => {
          loaded = key;
        }).finally(() => switching = null);
        await switching;
      }
    },
    leave(): void {
      if (--inFlight === 0) idle.splice(0).forEach((resolve) => resolve());
    },
  };
}
