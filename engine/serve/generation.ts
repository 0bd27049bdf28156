/**
 * One choice of a request, from prompt ids to its tokens, logprobs and text: sampled with the
 * choice's keyed draws, ended by a stop token, a stop string or its length, scored at the
 * request's temperature, and reported token by token to a streaming handler.
 */
import type { HfTokenizer } from "../../adapters/hf/mod.ts";
import { ChoiceText } from "./choice-text.ts";
import {
  choiceCoordinates,
  type DrawPlace,
  keyedChooser,
  type ScoredToken,
  scoreToken,
} from "./sampling.ts";
import type { SequenceScheduler } from "./scheduler.ts";

/** Sampling settings shared by the choices of a request. */
export interface ChoiceSettings {
  /** "" for the base, else an adapter's name. */
  readonly weights: string;
  readonly maxTokens: number;
  readonly temperature: number;
  readonly topP: number;
  readonly seed: number;
  /** The request's `polyrl_draw`: the trainer's coordinates of these draws; null: the server's. */
  readonly draw: DrawPlace | null;
  readonly stop: readonly string[];
  /** Go on past the model's EOS (vLLM's ignore_eos), to max_tokens or a stop string. */
  readonly ignoreEos: boolean;
  /** Score each token (logprobs asked for). */
  readonly score: boolean;
  /** How many top alternatives per token (0: none). */
  readonly topLogprobs: number;
  readonly signal: AbortSignal;
}

/** What a streaming handler hears after each token. */
export interface ChoiceStep {
  readonly token: number;
  readonly scored: ScoredToken | null;
  /** Where the token's text starts in the choice's text. */
  readonly offset: number;
  /** Text now safe to send (may be empty while a character or stop string forms). */
  readonly piece: string;
}

/** A finished choice. */
export interface ChoiceResult {
  readonly text: ChoiceText;
  readonly scored: readonly ScoredToken[];
  readonly finishReason: "stop" | "length";
  /** vLLM's stop_reason: the stop string that ended it, else null (EOS or length). */
  readonly stopReason: string | null;
  readonly aborted: boolean;
}

/**
 * Generates choice `index` (its keyed-draw coordinate) of `prompt`.
 *
 * @example
 * ```ts
 * import type { HfTokenizer } from "../../adapters/hf/mod.ts";
 * import { type ChoiceSettings, runChoice } from "./generation.ts";
 * import type { SequenceScheduler } from "./scheduler.ts";
 *
 * declare const scheduler: SequenceScheduler;
 * declare const tokenizer: HfTokenizer;
 * declare const ids: number[]; // the prompt
 * declare const settings: ChoiceSettings; // choiceSettings(ctx, body, maxTokens, signal, scoring)
 * const r = await runChoice(scheduler, tokenizer, ids, 0, settings);
 * console.log(r.text.text, r.finishReason); // "stop" or "length"
 * ```
 */
export async function runChoice(
  scheduler: SequenceScheduler,
  tokenizer: HfTokenizer,
  prompt: readonly number[],
  index: number,
  settings: ChoiceSettings,
  onStep?: (step: ChoiceStep) => void,
): Promise<ChoiceResult> {
  const text = new ChoiceText(tokenizer, settings.stop, onStep !== undefined);
  const scored: ScoredToken[] = [];
  const end = await scheduler.run({
    weights: settings.weights,
    prompt,
    maxTokens: settings.maxTokens,
    stopTokenIds: settings.ignoreEos ? [] : tokenizer.eosTokenIds,
    choose: keyedChooser(choiceCoordinates(settings.seed, settings.draw, index), settings),
    signal: settings.signal,
    accept: (token, logits) => {
      const stopped = text.push(token);
      const score = settings.score
        ? scoreToken(logits, token, settings.temperature, settings.topLogprobs)
        : null;
      if (score) scored.push(score);
      onStep?.({
        token,
        scored: score,
        offset: text.offsets.at(-1)!,
        piece: text.take(false),
      });
      return stopped;
    },
  });
  return {
    text,
    scored,
    finishReason: end === "length" ? "length" : "stop",
    stopReason: end === "accepted-stop" ? text.stoppedBy : null,
    aborted: end === "aborted",
  };
}
