/**
 * The one interface between the HTTP layer and the model: a sequence goes in, its tokens come out
 * one by one through `accept`, and the promise settles when the sequence ends. Whatever batches
 * the sequences (a loop over `Generator.generate` here; a continuous-batching scheduler where
 * sequences join and leave the running batch between decode steps) plugs in behind it.
 */

/** Why a sequence ended. */
export type SequenceEnd =
  /** it sampled one of its stop tokens (kept as its last token) */
  | "stop-token"
  /** `accept` asked to end it (a stop string) */
  | "accepted-stop"
  /** it reached its `maxTokens` */
  | "length"
  /** its signal aborted (the client went away) */
  | "aborted";

/** One sequence to generate. */
export interface Sequence {
  /** The loaded weights to run it on: "" for the base, else an adapter's name. */
  readonly weights: string;
  readonly prompt: readonly number[];
  /** New tokens at most, >= 1. */
  readonly maxTokens: number;
  readonly stopTokenIds: readonly number[];
  /** Picks token `index` of the completion from its logits (float32 [vocab]). */
  readonly choose: (logits: Float32Array, index: number) => number;
  /**
   * Hears each chosen token with the logits it was chosen from, before the next is computed;
   * returns true to end the sequence after this token (a stop string completed).
   */
  readonly accept: (token: number, logits: Float32Array, index: number) => boolean;
  readonly signal?: AbortSignal;
}

/** Sequences waiting and running now; batches run and sequences they held since the start. */
export interface SchedulerLoad {
  readonly waiting: number;
  readonly running: number;
  /** Model batches run so far (a round, or a continuous batch from start to empty). */
  readonly batches: number;
  /** Sequences those batches held. */
  readonly sequences: number;
  /** Sequences ended early because their signal aborted (their client went away). */
  readonly aborted: number;
}

/** Batches sequences onto the model; `run` settles when the sequence ends. */
export interface SequenceScheduler {
  run(sequence: Sequence): Promise<SequenceEnd>;
  /** What the scheduler holds and has done, for `/health` (and the tests of batching). */
  readonly load: () => SchedulerLoad;
  /** Ends the loop once the sequences running now are done; later `run`s are refused. */
  close(): Promise<void>;
}
