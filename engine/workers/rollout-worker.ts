/**
 * A rollout worker (`deno task worker`): takes episodes from the queue of a Postgres store, plays
 * each with its run's workflow against the inference servers (the openai backend's speaker:
 * keyed draw coordinates, the adapter version the trainer named in the job), and keeps its turns
 * in the played-episodes table. What it needs of a run (config, workflow, tokenizers) it reads
 * once from the run's log, so one worker serves any number of runs of the store.
 */
import { loadHfModel } from "../../adapters/hf/mod.ts";
import {
  currentEmbeddedVersion,
  decoderSpec,
  loadEmbeddedModel,
} from "../../adapters/model/mod.ts";
import { type EventStore, openStore } from "../../events/mod.ts";
import type { NormalizedConfig } from "../config/mod.ts";
import { buildWorkflow, type Workflow } from "../workflows/mod.ts";
import { type EndpointPool, endpointPool } from "../trainer/endpoint-pool.ts";
import { createOpenAISpeaker } from "../trainer/openai-speaker.ts";
import { recordedEmbedded } from "../trainer/recorded-embedded.ts";
import { readRunLog } from "../trainer/run-log.ts";
import type { SpeakingPolicy } from "../trainer/speaker.ts";
import { taskSource } from "../trainer/task-source.ts";
import { type EpisodeJob, openEpisodeQueue } from "./episode-queue.ts";
import { openPlayedEpisodes } from "./played-episodes.ts";

/** What a worker holds of one run. */
interface RunContext {
  readonly config: NormalizedConfig;
  readonly workflow: Workflow;
  readonly groups: ReadonlyMap<string, Pick<SpeakingPolicy, "id" | "spec" | "tokenizer">>;
  readonly endpoints: EndpointPool;
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
 * await runWorker({ storeUrl, store, concurrency: 4, signal: controller.signal });
 */
export async function runWorker(options: WorkerOptions): Promise<void> {
  const me = `${Deno.hostname()}:${Deno.pid}`;
  const queue = await openEpisodeQueue(options.storeUrl, { supervise: false });
  let store: Promise<EventStore> | undefined;
  try {
    await using played = await openPlayedEpisodes(queue.connectionString, queue.schema);
    const runs = new Map<string, Promise<RunContext>>();
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
        const ctx = await contextOf(job.runId);
        const speaker = createOpenAISpeaker(
          ctx.groups,
          ctx.config.agent_to_wg,
          {
            seed: ctx.config.seed,
            temperature: ctx.config.sampling.temperature,
            topP: ctx.config.sampling.top_p,
            maxTokens: ctx.config.sampling.max_tokens,
            stop: ctx.config.sampling.stop,
          },
          ctx.endpoints,
          { modelOf: (wg) => job.models[wg] },
        );
        const { phase, step, prompt, sample } = job;
        const episode = await speaker.episode(
          { phase, step, prompt, sample },
          (speak) => ctx.workflow.run(job.question, speak),
        );
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
    await (await store?.catch(() => undefined))?.close();
  }
}

/** A run's config, workflow, tokenizers and servers, from its log. */
async function runContext(
  store: EventStore,
  runId: string,
  endpoints: readonly string[] | undefined,
): Promise<RunContext> {
  const log = await readRunLog(store, runId);
  const config = log.config;
  if (!config.rollout) throw new Error(`run ${runId} has no rollout section; nothing to play`);
  const embedded = await recordedEmbedded(log.events, runId) ?? await currentEmbeddedVersion();
  const tasks = await taskSource(config);
  const workflow = await buildWorkflow(config, tasks.retriever);
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
  const rollout = endpoints?.length
    ? { ...config.rollout, endpoints: [...endpoints] }
    : config.rollout;
  return { config, workflow, groups, endpoints: endpointPool(rollout) };
}
