/**
 * The episodes workers have played, in the queue's schema: one row per episode, keyed by its
 * coordinates (run, phase, step, prompt, sample). A worker writes an episode's turns in one
 * INSERT that does nothing when the key is already there, so an episode played twice (its lease
 * expired on a slow worker, or a retried job) keeps the first copy whole: the trainer never sees
 * a duplicate, nor turns of two attempts mixed. The rows are staging, not the log: the trainer
 * turns them into the step's `turn.generated` events, in coordinate order, as a local run does.
 *
 * @example
 * ```ts
 * import { type EpisodeKey, openEpisodeQueue } from "./episode-queue.ts";
 * declare const key: EpisodeKey; // the episode's run, phase, step, prompt and sample
 * declare const turns: readonly PlayedTurn[];
 * await using queue = await openEpisodeQueue("postgres://127.0.0.1/lab", { supervise: false });
 * await using played = await openPlayedEpisodes(queue.connectionString, queue.schema);
 * await played.record(key, turns, "host:1234");
 * ```
 */
import pg from "pg";
import { Kysely, PostgresDialect } from "kysely";
import type { TurnRecord } from "../trainer/rollout/mod.ts";
import type { EpisodeKey } from "./episode-queue.ts";

/** One played turn: its text and token record, as its `turn.generated` event carries them. */
export interface PlayedTurn {
  readonly turn: number;
  readonly text: string;
  readonly extra: TurnRecord;
}

/** A played episode as the trainer reads it back. */
export interface PlayedEpisode {
  readonly prompt: number;
  readonly sample: number;
  readonly turns: readonly PlayedTurn[];
  /** `host:pid` of the worker whose copy was kept. */
  readonly worker: string;
}

interface PlayedEpisodesTable {
  run_id: string;
  phase: string;
  step: number;
  prompt: number;
  sample: number;
  /** JSON of the turns, token ids and logprobs as number arrays (float32 values round-trip) */
  turns: string;
  worker: string;
  played_at: number;
}

interface QueueDatabase {
  played_episodes: PlayedEpisodesTable;
}

/** The played-episodes table of one queue schema. */
export interface PlayedEpisodes extends AsyncDisposable {
  /** Keeps an episode's turns unless the episode is already there; whether this copy was kept. */
  record(key: EpisodeKey, turns: readonly PlayedTurn[], worker: string): Promise<boolean>;
  /** How many of the step's episodes are played (a cheap poll: no turns read). */
  countOfStep(runId: string, phase: string, step: number): Promise<number>;
  /** The step's played episodes, in (prompt, sample) order. */
  ofStep(runId: string, phase: string, step: number): Promise<PlayedEpisode[]>;
  close(): Promise<void>;
}

type TurnJson = {
  turn: number;
  text: string;
  workerGroup: string;
  promptTokens: number[];
  responseTokens: number[];
  logprobs: number[];
  finishReason: "stop" | "length";
};

const toJson = (t: PlayedTurn): TurnJson => ({
  turn: t.turn,
  text: t.text,
  workerGroup: t.extra.workerGroup,
  promptTokens: [...t.extra.promptTokens],
  responseTokens: [...t.extra.responseTokens],
  logprobs: [...t.extra.logprobs],
  finishReason: t.extra.finishReason,
});

const fromJson = (t: TurnJson): PlayedTurn => ({
  turn: t.turn,
  text: t.text,
  extra: {
    workerGroup: t.workerGroup,
    promptTokens: Int32Array.from(t.promptTokens),
    responseTokens: Int32Array.from(t.responseTokens),
    logprobs: Float32Array.from(t.logprobs),
    finishReason: t.finishReason,
  },
});

/** Opens (creating when missing) the played-episodes table in `schema`. */
export async function openPlayedEpisodes(
  connectionString: string,
  schema: string,
): Promise<PlayedEpisodes> {
  const pool = new pg.Pool({ connectionString, max: 2, options: `-c search_path=${schema}` });
  const db = new Kysely<QueueDatabase>({ dialect: new PostgresDialect({ pool }) });
  const create = () =>
    db.schema.createTable("played_episodes").ifNotExists()
      .addColumn("run_id", "text", (c) => c.notNull())
      .addColumn("phase", "text", (c) => c.notNull())
      .addColumn("step", "integer", (c) => c.notNull())
      .addColumn("prompt", "integer", (c) => c.notNull())
      .addColumn("sample", "integer", (c) => c.notNull())
      .addColumn("turns", "text", (c) => c.notNull())
      .addColumn("worker", "text", (c) => c.notNull())
      .addColumn("played_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("played_episodes_key", [
        "run_id",
        "phase",
        "step",
        "prompt",
        "sample",
      ])
      .execute();
  // Two processes creating it at once: the loser's IF NOT EXISTS can still trip over the
  // winner's catalog row; by the second try the table is there.
  await create().catch(create);
  const close = () => db.destroy();
  return {
    async record(key, turns, worker) {
      const inserted = await db.insertInto("played_episodes")
        .values({
          run_id: key.runId,
          phase: key.phase,
          step: key.step,
          prompt: key.prompt,
          sample: key.sample,
          turns: JSON.stringify(turns.map(toJson)),
          worker,
          played_at: Date.now(),
        })
        .onConflict((c) => c.doNothing())
        .executeTakeFirst();
      return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
    },
    async countOfStep(runId, phase, step) {
      const { n } = await db.selectFrom("played_episodes")
        .select((eb) => eb.fn.countAll<string>().as("n"))
        .where("run_id", "=", runId).where("phase", "=", phase).where("step", "=", step)
        .executeTakeFirstOrThrow();
      return Number(n);
    },
    async ofStep(runId, phase, step) {
      const rows = await db.selectFrom("played_episodes")
        .select(["prompt", "sample", "turns", "worker"])
        .where("run_id", "=", runId).where("phase", "=", phase).where("step", "=", step)
        .orderBy("prompt").orderBy("sample")
        .execute();
      return rows.map((r) => ({
        prompt: r.prompt,
        sample: r.sample,
        worker: r.worker,
        turns: (JSON.parse(r.turns) as TurnJson[]).map(fromJson),
      }));
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
