/**
 * A `SequenceScheduler` over `Generator.generate`: each round takes the sequences waiting for the
 * weights of the oldest one (as many as fit the context and `maxBatch`) and generates them as one
 * batch; sequences arriving meanwhile wait for the next round. A sequence that ends early (its
 * stop string, its own `maxTokens`, its client gone) settles at once and is fed its first stop
 * token from then on, so the generator drops its row from the decode batch at the next step.
 */
import type { GenerationRequest, Generator, ParamFeeds } from "../../adapters/model/mod.ts";
import { ApiError } from "./api-error.ts";
import type { Sequence, SequenceEnd, SequenceScheduler } from "./scheduler.ts";

/** Loaded weights a round runs on, held until `release`. */
export interface HeldWeights {
  readonly generator: Generator;
  readonly feeds: ParamFeeds;
  release(): void;
}

/** What the loop needs of the served model. */
export interface RoundOptions {
  /** Holds the weights named by a sequence (throws ApiError 404 once unloaded). */
  readonly hold: (weights: string) => HeldWeights;
  /** The model's context: longest prompt + max new tokens - 1 must fit. */
  readonly maxPositions: number;
  /** Rows per round at most. */
  readonly maxBatch: number;
  readonly padTokenId: number;
}

/** Thrown out of the generator once every row of a round has ended, to stop it there. */
class RoundOver extends Error {}

interface Waiting {
  readonly sequence: Sequence;
  readonly resolve: (end: SequenceEnd) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Starts the loop; it idles while nothing waits.
 *
 * @example
 * const scheduler = roundScheduler({ hold, maxPositions: 1024, maxBatch: 64, padTokenId: 0 });
 * const end = await scheduler.run({ weights: "", prompt, maxTokens: 16, ... });
 */
export function roundScheduler(options: RoundOptions): SequenceScheduler {
  let waiting: Waiting[] = [];
  let running = 0;
  let batches = 0;
  let sequences = 0;
  let aborted = 0;
  let loop: Promise<void> | null = null;
  let closed = false;

  /**
   * The oldest sequence and those waiting with the same weights and stop tokens (the generator
   * takes one set per batch), as many as fit one batch, in arrival order.
   */
  function nextRound(): Waiting[] {
    const kind = (s: Sequence) => `${s.weights}\0${s.stopTokenIds.join(",")}`;
    const first = kind(waiting[0].sequence);
    const round: Waiting[] = [];
    let width = 0;
    let steps = 0;
    for (const w of waiting) {
      if (kind(w.sequence) !== first || round.length === options.maxBatch) continue;
      const nextWidth = Math.max(width, w.sequence.prompt.length);
      const nextSteps = Math.max(steps, w.sequence.maxTokens);
      if (round.length > 0 && nextWidth + nextSteps - 1 > options.maxPositions) continue;
      round.push(w);
      width = nextWidth;
      steps = nextSteps;
    }
    const taken = new Set(round);
    waiting = waiting.filter((w) => !taken.has(w));
    return round;
  }

  async function runRound(round: Waiting[]): Promise<void> {
    const live = round.filter((w) => {
      if (!w.sequence.signal?.aborted) return true;
      aborted++;
      w.resolve("aborted");
      return false;
    });
    if (live.length === 0) return;
    let held: HeldWeights;
    try {
      held = options.hold(live[0].sequence.weights);
    } catch (err) {
      live.forEach((w) => w.reject(err));
      return;
    }
    const ended: (SequenceEnd | null)[] = live.map(() => null);
    const end = (row: number, why: SequenceEnd) => {
      ended[row] = why;
      if (why === "aborted") aborted++;
      live[row].resolve(why);
    };
    // The round's stop tokens (the model's EOS, or none with ignore_eos); the first is fed to
    // rows that ended on their own terms, so the generator drops them from the batch.
    const stopIds = live[0].sequence.stopTokenIds;
    const request: GenerationRequest = {
      prompts: live.map((w) => w.sequence.prompt),
      maxTokens: Math.max(...live.map((w) => w.sequence.maxTokens)),
      // The generator's own logprobs are not used: each sequence scores at its temperature.
      temperature: 1,
      stopTokenIds: stopIds,
      padTokenId: options.padTokenId,
      choose: (logits, row, index) => {
        const s = live[row].sequence;
        if (ended[row] === null && s.signal?.aborted) end(row, "aborted");
        if (ended[row] !== null) {
          // Without stop tokens (ignore_eos) an ended row cannot leave the batch; once all have
          // ended, the round stops here.
          if (ended.every((e) => e !== null)) throw new RoundOver();
          return stopIds[0] ?? options.padTokenId;
        }
        const token = s.choose(logits, index);
        const stopString = s.accept(token, logits, index);
        if (s.stopTokenIds.includes(token)) end(row, "stop-token");
        else if (stopString) end(row, "accepted-stop");
        else if (index + 1 >= s.maxTokens) end(row, "length");
        return token;
      },
    };
    running = live.length;
    batches++;
    sequences += live.length;
    try {
      await held.generator.generate(held.feeds, request);
      // Rows the generator ran to the batch's length without ending on their own terms.
      ended.forEach((why, row) => why === null && end(row, "length"));
    } catch (err) {
      if (err instanceof RoundOver) return;
      const failure = new ApiError(500, `generation failed: ${(err as Error).message}`);
      live.forEach((w, row) => ended[row] === null && w.reject(failure));
    } finally {
      running = 0;
      held.release();
    }
  }

  async function drain(): Promise<void> {
    // Requests that arrive in the same turn of the event loop share the first round.
    await new Promise((r) => setTimeout(r, 0));
    while (waiting.length > 0) await runRound(nextRound());
    loop = null;
  }

  return {
    run(sequence) {
      if (closed) return Promise.reject(new ApiError(503, "the server is shutting down"));
      return new Promise<SequenceEnd>((resolve, reject) => {
        waiting.push({ sequence, resolve, reject });
        loop ??= drain();
      });
    },
    load: () => ({ waiting: waiting.length, running, batches, sequences, aborted }),
    close: async () => {
      closed = true;
      await loop;
    },
  };
}
