/**
 * The `SequenceScheduler` of the server: one continuous batch per loaded weights (the base, each
 * adapter; adapters/model, `Generator.openBatch`): a request's sequences join the running decode
 * batch at the next step and leave it when they end, so a new request never waits for a batch to
 * drain. The server steps the batch itself, starting a turn of the event loop after the first
 * arrival, so the sequences of one request (n > 1, several prompts) and requests that arrive
 * together join in the same step, prefilled together. A batch that empties is closed and the next
 * sequence opens a fresh one. A stop string or a vanished client ends the sequence at once (its
 * row leaves at the next step).
 */
import { setImmediate } from "node:timers";
import type { ContinuousBatch, Generator, ParamFeeds } from "../../adapters/model/mod.ts";
import { ApiError } from "./api-error.ts";
import type { SchedulerLoad, Sequence, SequenceEnd, SequenceScheduler } from "./scheduler.ts";

/** Loaded weights, held by a sequence until `release`. */
export interface HeldWeights {
  /**
   * Names this load of the weights: an adapter unloaded and loaded again under the same name is
   * another key, so its sequences never join a batch still fed the old matrices.
   */
  readonly key: string;
  readonly generator: Generator;
  readonly feeds: ParamFeeds;
  release(): void;
}

/** What the scheduler needs of the served model. */
export interface ContinuousOptions {
  /** Holds the weights named by a sequence (throws ApiError 404 once unloaded). */
  readonly hold: (weights: string) => HeldWeights;
  /** Sequences decoding at once per batch; more wait for a place. */
  readonly maxRows: number;
  readonly padTokenId: number;
}

/** Thrown from a sequence's token callback to end it after a stop string. */
const STOP_STRING = Symbol("stop string");

/**
 * The scheduler over the weights `options.hold` gives, `maxRows` sequences per batch at most.
 *
 * @example
 * ```ts
 * import { continuousScheduler } from "./continuous-scheduler.ts";
 * import { choiceCoordinates, keyedChooser } from "./sampling.ts";
 * import type { ServedModel } from "./served-model.ts";
 *
 * declare const served: ServedModel;
 * declare const prompt: number[];
 * const scheduler = continuousScheduler({ hold: (w) => served.hold(w), maxRows: 64, padTokenId: 0 });
 * const tokens: number[] = [];
 * const end = await scheduler.run({
 *   weights: "", // the base
 *   prompt,
 *   maxTokens: 16,
 *   stopTokenIds: [],
 *   choose: keyedChooser(choiceCoordinates(7, null, 0), { temperature: 1, topP: 1 }),
 *   accept: (token) => tokens.push(token) < 0, // never asks to stop
 * });
 * // end: "length" once 16 tokens are in
 * ```
 */
export function continuousScheduler(options: ContinuousOptions): SequenceScheduler {
  const batches = new Map<string, ContinuousBatch>();
  const stepping = new Set<ContinuousBatch>();
  const closing = new Set<Promise<void>>();
  let opened = 0;
  let sequences = 0;
  let aborted = 0;
  let closed = false;

  const batchFor = (key: string, held: HeldWeights): ContinuousBatch => {
    let batch = batches.get(key);
    if (!batch) {
      batch = held.generator.openBatch(held.feeds, {
        maxRows: options.maxRows,
        padTokenId: options.padTokenId,
      });
      batches.set(key, batch);
      opened++;
    }
    return batch;
  };

  /** Closes `key`'s batch once nothing runs or waits in it. */
  const closeIfIdle = (key: string, batch: ContinuousBatch) => {
    if (batches.get(key) !== batch || batch.running + batch.queued > 0) return;
    batches.delete(key);
    const done = batch.close().finally(() => closing.delete(done));
    closing.add(done);
  };

  const nextTurn = () => new Promise((resolve) => setTimeout(resolve, 0));
  // Between steps a setImmediate lets arrivals in (HTTP handlers also run while a step awaits the
  // model); a loop of setTimeout(0) is clamped to milliseconds a turn (2.5 ms each, measured here).
  const betweenSteps = () => new Promise((resolve) => setImmediate(resolve));

  /** Steps `batch` while it holds sequences, letting arrivals in between steps; then closes it. */
  const pump = (key: string, batch: ContinuousBatch) => {
    if (stepping.has(batch)) return;
    stepping.add(batch);
    (async () => {
      try {
        // Sequences submitted in this turn (one request's choices, a burst of requests) join
        // the first step together.
        await nextTurn();
        while (batch.running + batch.queued > 0) {
          // A failed model run fails its sequences (their results reject); the batch goes on.
          await batch.step();
          await betweenSteps();
        }
      } finally {
        stepping.delete(batch);
        closeIfIdle(key, batch);
      }
    })();
  };

  async function run(sequence: Sequence): Promise<SequenceEnd> {
    if (closed) throw new ApiError(503, "the server is shutting down");
    if (sequence.signal?.aborted) {
      aborted++;
      return "aborted";
    }
    const held = options.hold(sequence.weights);
    const batch = batchFor(held.key, held);
    sequences++;
    // The logits a token was chosen from, for the callback right after (top logprobs).
    let logits: Float32Array = new Float32Array(0);
    let stopped = false;
    try {
      const submitted = batch.submit({
        prompt: sequence.prompt,
        maxTokens: sequence.maxTokens,
        // The batch's own logprobs go unused: each sequence scores at its request's temperature.
        temperature: 1,
        stopTokenIds: sequence.stopTokenIds,
        signal: sequence.signal,
        choose: (l, index) => {
          logits = l;
          return sequence.choose(l, index);
        },
        onToken: (token, _logprob, index) => {
          if (sequence.accept(token, logits, index)) {
            stopped = true;
            throw STOP_STRING;
          }
        },
      });
      pump(held.key, batch);
      const row = await submitted.result;
      return row.finishReason === "stop-token" ? "stop-token" : "length";
    } catch (err) {
      if (stopped) return "accepted-stop";
      if (sequence.signal?.aborted) {
        aborted++;
        return "aborted";
      }
      throw new ApiError(500, `generation failed: ${(err as Error).message ?? String(err)}`);
    } finally {
      held.release();
    }
  }

  return {
    run,
    load: (): SchedulerLoad => {
      const all = [...batches.values()];
      return {
        waiting: all.reduce((n, b) => n + b.queued, 0),
        running: all.reduce((n, b) => n + b.running, 0),
        batches: opened,
        sequences,
        aborted,
      };
    },
    close: async () => {
      closed = true;
      // Running sequences end on their own terms; the pumps then close their batches.
      while (stepping.size > 0) await new Promise((r) => setTimeout(r, 10));
      await Promise.all(closing);
    },
  };
}
