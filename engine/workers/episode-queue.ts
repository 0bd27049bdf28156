/**
 * The queue of rollout work in a run's Postgres database: one job per episode (a prompt x sample
 * of one step and phase), kept by pg-boss (docs/SCALE-OUT.md says why pg-boss) in the schema
 * `<store schema>_rollouts`, beside the table of played episodes (played-episodes.ts).
 *
 * Leases: the queue sets pg-boss's `heartbeatSeconds`, so a worker holding a job refreshes it
 * while it plays; a worker that dies (SIGKILL, a lost machine) stops refreshing, the supervisor of
 * any live instance (the trainer's, checking every second) fails the job after
 * `HEARTBEAT_SECONDS`, and pg-boss hands it to the next worker that asks, up to `RETRY_LIMIT`
 * times. A job's id is derived from its episode's coordinates, so a trainer that enqueues a step
 * again (a resumed run) adds no second job for an episode that already has one.
 *
 * The dispatch follows veRL's agent loop (verl/experimental/agent_loop/agent_loop.py,
 * AgentLoopManager.generate_sequences: the batch is split over the AgentLoopWorkers, each runs
 * its episodes against the least-loaded server, and the outputs are concatenated in input order,
 * not completion order); here workers pull one episode at a time instead of taking a fixed
 * chunk, so a slow or dead worker holds back one episode, not a share of the step, and the
 * trainer reassembles the step in coordinate order. veRL leaves a failed worker to Ray (the step
 * fails); retrying an episode whose lease expired is this queue's own addition.
 *
 * @example
 * ```ts
 * declare const job: EpisodeJob; // one prompt x sample of a step
 * await using queue = await openEpisodeQueue("postgres://127.0.0.1/lab", { supervise: true });
 * await queue.enqueue([job]);
 * ```
 */
import { createHash } from "node:crypto";
import { PgBoss } from "pg-boss";
import { z } from "zod";
import { postgresOpenError, redactUrl } from "../../events/mod.ts";
import type { Question } from "../workflows/mod.ts";
import type { Phase } from "../trainer/rollout/mod.ts";

/** pg-boss's queue name for every run's episodes. */
const QUEUE = "polyrl-episodes";
/** A job whose worker has not refreshed it for this long is failed and retried. */
export const HEARTBEAT_SECONDS = 10;
/** Attempts after the first (a worker died, or the episode failed on it). */
export const RETRY_LIMIT = 2;

/** One episode to play: where it sits in its run, its question, and the servers' model names. */
export interface EpisodeJob {
  readonly runId: string;
  readonly phase: Phase;
  readonly step: number;
  readonly prompt: number;
  readonly sample: number;
  readonly question: Question;
  /** Each worker group's `model` for this step (its adapter version, or the base's name). */
  readonly models: Readonly<Record<string, string>>;
  /**
   * The local backend's weights for this step: each trainable group's parameters and optimizer
   * state as blob hashes of the run's store (the state `restore` takes); empty with servers.
   */
  readonly weights: Readonly<Record<string, { parameters: string; optimizer: string }>>;
}

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/**
 * What a worker accepts as a job: the queue is a database table any client of it can write, so
 * a job is checked before anything of it is used (a malformed one fails, the worker goes on).
 */
const episodeJobSchema = z.strictObject({
  runId: z.string().min(1).max(200),
  phase: z.enum(["rollout", "eval"]),
  step: count,
  prompt: count,
  sample: count,
  question: z.strictObject({ id: z.string(), problem: z.string(), answer: z.string() }),
  models: z.record(z.string(), z.string().min(1).max(200)),
  weights: z.record(
    z.string(),
    z.strictObject({
      parameters: z.string().regex(/^[0-9a-f]{64}$/),
      optimizer: z.string().regex(/^[0-9a-f]{64}$/),
    }),
  ),
});

/** A job that is not one this queue makes. */
export class MalformedJobError extends Error {
  override name = "MalformedJobError";
}

/** A job's coordinates within its run, as the played-episodes table keys them. */
export type EpisodeKey = Pick<EpisodeJob, "runId" | "phase" | "step" | "prompt" | "sample">;

/** A job that failed on its last attempt: what the worker said. */
export interface FailedEpisode {
  readonly key: EpisodeKey;
  readonly attempts: number;
  readonly message: string;
}

/** The queue's schema and a plain connection string from a store URL (`?schema=` removed). */
export function queueLocation(storeUrl: string): { connectionString: string; schema: string } {
  const url = new URL(storeUrl);
  const schema = url.searchParams.get("schema") ?? "polyrl";
  url.searchParams.delete("schema");
  return { connectionString: url.toString(), schema: `${schema}_rollouts` };
}

/** A UUID from an episode's coordinates: the same job id however often it is enqueued. */
export function episodeJobId(key: EpisodeKey): string {
  const hex = createHash("sha256")
    .update(JSON.stringify([key.runId, key.phase, key.step, key.prompt, key.sample]))
    .digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-` +
    hex.slice(20, 32);
}

/** The queue as trainers and workers use it. */
export interface EpisodeQueue extends AsyncDisposable {
  readonly schema: string;
  readonly connectionString: string;
  /** Adds each job unless its episode already has one; a failed or cancelled one is retried. */
  enqueue(jobs: readonly EpisodeJob[]): Promise<void>;
  /** The step's jobs that failed for good. */
  failed(runId: string, phase: Phase, step: number): Promise<FailedEpisode[]>;
  /** Cancels the run's jobs that are waiting or being played. */
  cancelUnfinished(runId: string): Promise<void>;
  /** Whether any of the step's jobs was ever taken by a worker. */
  taken(runId: string, phase: Phase, step: number): Promise<boolean>;
  /**
   * Plays jobs with `play` as they come, `concurrency` at once, until `stop`: each job's lease is
   * refreshed while `play` runs; a throw fails the attempt (retried while attempts are left). A
   * job whose data is not an episode fails with MalformedJobError.
   */
  work(
    concurrency: number,
    play: (job: EpisodeJob) => Promise<void>,
    onMalformed: (err: MalformedJobError) => void,
  ): Promise<void>;
  /** Stops taking jobs and waits for those being played (graceful), then disconnects. */
  stop(): Promise<void>;
}

/**
 * Connects to the queue of the store at `storeUrl`, creating its schema and queue when missing.
 * `supervise` runs pg-boss's supervisor here (the trainer does): it fails jobs whose heartbeat
 * stopped, every second.
 */
export async function openEpisodeQueue(
  storeUrl: string,
  options: { supervise: boolean },
): Promise<EpisodeQueue> {
  const { connectionString, schema } = queueLocation(storeUrl);
  const boss = new PgBoss({
    connectionString,
    schema,
    supervise: options.supervise,
    // The queue's expiry pass runs at the longer of the two intervals (pg-boss boss.js,
    // #onSupervise): both at 1 s, a dead worker's episode is free again a second after its lease.
    superviseIntervalSeconds: 1,
    monitorIntervalSeconds: 1,
    schedule: false,
    // Its own errors (a lost connection while polling) are retried by pg-boss; keep them visible.
    max: 4,
  });
  let lastError: Error | null = null;
  boss.on("error", (err: Error) => {
    lastError = err;
  });
  try {
    await boss.start();
  } catch (err) {
    throw postgresOpenError(redactUrl(storeUrl), new URL(storeUrl), schema, err);
  }
  if (!(await boss.getQueue(QUEUE))) {
    await boss.createQueue(QUEUE, {
      heartbeatSeconds: HEARTBEAT_SECONDS,
      retryLimit: RETRY_LIMIT,
      retryDelay: 1,
      // Far beyond any episode: the heartbeat, not this, finds dead workers.
      expireInSeconds: 24 * 3600,
    }).catch(async (err) => {
      // Another process created it in between.
      if (!(await boss.getQueue(QUEUE))) throw err;
    });
  }
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await boss.stop({ graceful: true, timeout: 60_000 });
  };
  const stepJobs = (runId: string, phase: Phase, step: number) =>
    boss.findJobs<EpisodeJob>(QUEUE, { data: { runId, phase, step }, limit: 100_000 });

  return {
    schema,
    connectionString,
    async enqueue(jobs) {
      const ids = jobs.map(episodeJobId);
      const existing = new Map<string, string>();
      for (
        const job of jobs.length ? await stepJobs(jobs[0].runId, jobs[0].phase, jobs[0].step) : []
      ) {
        existing.set(job.id, job.state);
      }
      const fresh = jobs.filter((_, i) => !existing.has(ids[i]));
      if (fresh.length > 0) {
        await boss.insert(QUEUE, fresh.map((data) => ({ id: episodeJobId(data), data })));
      }
      // A failed episode is retried; one cancelled when its run failed is resumed (pg-boss's
      // retry leaves cancelled jobs as they are, and the step would wait on them for ever).
      const inState = (state: string) => ids.filter((id) => existing.get(id) === state);
      const failed = inState("failed");
      if (failed.length > 0) await boss.retry(QUEUE, failed);
      const cancelled = inState("cancelled");
      if (cancelled.length > 0) await boss.resume(QUEUE, cancelled);
    },
    async failed(runId, phase, step) {
      return (await stepJobs(runId, phase, step))
        .filter((j) => j.state === "failed")
        .map((j) => ({
          key: { runId, phase, step, prompt: j.data.prompt, sample: j.data.sample },
          attempts: j.retryCount + 1,
          message: failureMessage(j.output),
        }));
    },
    async cancelUnfinished(runId) {
      const open = (await boss.findJobs<EpisodeJob>(QUEUE, { data: { runId }, limit: 100_000 }))
        .filter((j) => ["created", "retry", "active"].includes(j.state));
      if (open.length > 0) await boss.cancel(QUEUE, open.map((j) => j.id));
    },
    async taken(runId, phase, step) {
      return (await stepJobs(runId, phase, step)).some((j) => j.startedOn !== null);
    },
    async work(concurrency, play, onMalformed) {
      if (lastError) throw lastError;
      await boss.work<EpisodeJob>(
        QUEUE,
        { localConcurrency: concurrency, batchSize: 1, pollingIntervalSeconds: 0.5 },
        async ([job]) => {
          const parsed = episodeJobSchema.safeParse(job.data);
          if (!parsed.success) {
            const err = new MalformedJobError(
              `job ${job.id} is not an episode: ${
                z.prettifyError(parsed.error).replace(/\n/g, "; ")
              }`,
            );
            onMalformed(err);
            throw err;
          }
          await play(parsed.data);
        },
      );
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** What a failed attempt left in the job's output: pg-boss stores the thrown error there. */
function failureMessage(output: unknown): string {
  if (output && typeof output === "object" && "message" in output) {
    return String((output as { message: unknown }).message);
  }
  return output === null || output === undefined ? "(no message)" : JSON.stringify(output);
}
