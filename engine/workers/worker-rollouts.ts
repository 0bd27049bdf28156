/**
 * The trainer's side of rollout workers (rollout.dispatch "workers"): a step's episodes go to the
 * queue, one job each; the trainer waits until every one of them is in the played-episodes table,
 * then runs the workflow once more per episode with every turn answered from the worker's record
 * (recordedSpeaker), which rebuilds exactly the episodes a trainer-side rollout returns. The step
 * then goes on as always: rewards, advantages, the events in coordinate order, the updates. Which
 * worker played what, and in which order they finished, leaves no trace in the log.
 */
import type { NormalizedConfig } from "../config/mod.ts";
import type { Workflow } from "../workflows/mod.ts";
import {
  type GroupPolicy,
  type Phase,
  recordedSpeaker,
  type RecordedTurns,
  type Rollout,
  type RolloutFn,
  type StepWeights,
} from "../trainer/rollout/mod.ts";
import { type EpisodeJob, type EpisodeQueue, openEpisodeQueue } from "./episode-queue.ts";
import { openPlayedEpisodes, type PlayedEpisode } from "./played-episodes.ts";

/** How often the trainer looks for played episodes and failed jobs, in ms. */
const POLL_MS = 100;
/** After this long with no episode of a step taken, the trainer says no worker seems to run. */
const IDLE_WARNING_MS = 30_000;

/** An episode failed on every attempt the queue allows: the run fails with the worker's reason. */
export class RolloutWorkerError extends Error {
  override name = "RolloutWorkerError";
}

/** Rollout workers' episodes differ from what this trainer's workflow asks for. */
export class PlayedEpisodeMismatch extends Error {
  override name = "PlayedEpisodeMismatch";
}

/**
 * The rollout function of a run whose episodes workers play, and its queue to close after the
 * run: the trainer's RolloutDispatch (engine/trainer/rollout). `weights` says where the jobs point
 * the workers for each step's weights. Like a trainer-side rollout, a step being played is not cut
 * short by the run's interrupt: it ends at the step boundary.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../config/mod.ts";
 * import type { GroupPolicy, StepWeights } from "../trainer/rollout/mod.ts";
 * import type { Question, Workflow } from "../workflows/mod.ts";
 * import { workerRollouts } from "./worker-rollouts.ts";
 *
 * declare const config: NormalizedConfig; // its store a postgres:// URL
 * declare const workflow: Workflow;
 * declare const groups: ReadonlyMap<string, GroupPolicy>; // each worker group's policy
 * declare const weights: StepWeights;
 * declare const questions: readonly Question[];
 * await using workers = await workerRollouts(config, workflow, groups, "smoke-1", weights);
 * const rollouts = await workers.rollout("rollout", 0, questions, config.group_size);
 * ```
 */
export async function workerRollouts(
  config: Pick<NormalizedConfig, "store" | "sampling" | "agent_to_wg">,
  workflow: Workflow,
  groups: ReadonlyMap<string, GroupPolicy>,
  runId: string,
  weights: StepWeights,
  options: { readonly warn?: (line: string) => void } = {},
): Promise<{ rollout: RolloutFn } & AsyncDisposable> {
  const queue = await openEpisodeQueue(config.store, { supervise: true });
  const played = await openPlayedEpisodes(queue.connectionString, queue.schema).catch(
    async (err) => {
      await queue.stop();
      throw err;
    },
  );
  const settings = { maxTokens: config.sampling.max_tokens };

  const rollout: RolloutFn = async (phase, at, questions, n) => {
    const models = weights.kind === "served"
      ? Object.fromEntries([...groups.keys()].map((wg) => [wg, weights.served.modelOf(wg)]))
      : {};
    const blobs = weights.kind === "blobs" ? await weightBlobs(groups, weights.putBlob) : {};
    const jobs: EpisodeJob[] = questions.flatMap((question, prompt) =>
      Array.from({ length: n }, (_, sample) => ({
        runId,
        phase,
        step: at,
        prompt,
        sample,
        question,
        models,
        weights: blobs,
      }))
    );
    await queue.enqueue(jobs);
    const episodes = await waitForStep(queue, played, runId, phase, at, jobs.length, options);

    const turns: RecordedTurns = new Map(
      episodes.flatMap((e) =>
        e.turns.map((t) => [`${phase}/${at}/${e.prompt}/${e.sample}/${t.turn}`, t] as const)
      ),
    );
    const speaker = recordedSpeaker(turns, groups, config.agent_to_wg, settings);
    const rollouts = await Promise.all(
      questions.map(async (question, prompt): Promise<Rollout> => ({
        question,
        episodes: await Promise.all(Array.from({ length: n }, (_, sample) =>
          speaker.episode(
            { phase, step: at, prompt, sample },
            (speak) => workflow.run(question, speak),
          ))),
      })),
    );
    checkPrompts(rollouts, episodes, phase, at);
    return rollouts;
  };

  const close = async () => {
    await played.close();
    // A run that stopped (failed, interrupted) leaves no work behind for the workers; a resume
    // queues it again.
    await queue.cancelUnfinished(runId);
    await queue.stop();
  };
  return { rollout, [Symbol.asyncDispose]: close };
}

/** Each trainable group's current parameters and optimizer state, stored as blobs. */
async function weightBlobs(
  groups: ReadonlyMap<string, GroupPolicy>,
  putBlob: (bytes: Uint8Array) => Promise<string>,
): Promise<EpisodeJob["weights"]> {
  const out: Record<string, { parameters: string; optimizer: string }> = {};
  for (const policy of groups.values()) {
    const optimizer = await policy.optimizerCheckpoint();
    if (optimizer === null) continue;
    out[policy.id] = {
      parameters: await putBlob(await policy.checkpoint()),
      optimizer: await putBlob(optimizer),
    };
  }
  return out;
}

/** Polls until the step's `count` episodes are played; throws on a job that failed for good. */
async function waitForStep(
  queue: EpisodeQueue,
  played: Awaited<ReturnType<typeof openPlayedEpisodes>>,
  runId: string,
  phase: Phase,
  step: number,
  count: number,
  options: { readonly warn?: (line: string) => void },
): Promise<PlayedEpisode[]> {
  const since = Date.now();
  let warned = false;
  for (let round = 0;; round++) {
    if (await played.countOfStep(runId, phase, step) === count) {
      return await played.ofStep(runId, phase, step);
    }
    // Job states cost a query over the step's jobs: every tenth round (a second) is soon enough.
    if (round % 10 === 0) {
      const [failed] = await queue.failed(runId, phase, step);
      if (failed) {
        const { prompt, sample } = failed.key;
        throw new RolloutWorkerError(
          `${phase} step ${step} prompt ${prompt} sample ${sample} failed on rollout workers ` +
            `after ${failed.attempts} attempts: ${failed.message}`,
        );
      }
      if (
        !warned && Date.now() - since > IDLE_WARNING_MS && !(await queue.taken(runId, phase, step))
      ) {
        warned = true;
        options.warn?.(
          `no rollout worker has taken an episode of ${phase} step ${step} in ` +
            `${IDLE_WARNING_MS / 1000} s; start one with deno task worker --store URL`,
        );
      }
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Each turn's prompt, rebuilt here from the workflow, must be the tokens the worker sent: a
 * worker running other code (another workflow, template or tokenizer) is refused, not logged.
 */
function checkPrompts(
  rollouts: readonly Rollout[],
  played: readonly PlayedEpisode[],
  phase: Phase,
  step: number,
): void {
  for (const e of played) {
    const episode = rollouts[e.prompt].episodes[e.sample];
    if (episode.turns.length !== e.turns.length) {
      throw new PlayedEpisodeMismatch(
        `${phase} step ${step} prompt ${e.prompt} sample ${e.sample}: worker ${e.worker} played ` +
          `${e.turns.length} turns, the trainer's workflow takes ${episode.turns.length}; run ` +
          "workers on the trainer's code version",
      );
    }
    episode.turns.forEach((t, i) => {
      const theirs = e.turns[i].extra.promptTokens;
      const ours = t.output.extra.promptTokens;
      if (theirs.length !== ours.length || theirs.some((v, j) => v !== ours[j])) {
        throw new PlayedEpisodeMismatch(
          `${phase} step ${step} prompt ${e.prompt} sample ${e.sample} turn ${t.turn}: worker ` +
            `${e.worker} prompted other tokens than the trainer builds; run workers on the ` +
            "trainer's code version",
        );
      }
    });
  }
}
