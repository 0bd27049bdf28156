/**
 * What the completion handlers share: the served model, the scheduler, and how a request's
 * common fields (model, max_tokens against the context, seed, stop) become choice settings.
 */
import type { Context } from "hono";
import type { HfTokenizer } from "../../adapters/hf/mod.ts";
import { ApiError } from "./api-error.ts";
import type { ChoiceSettings } from "./generation.ts";
import { type DrawPlace, randomSeed } from "./sampling.ts";
import type { SequenceScheduler } from "./scheduler.ts";
import type { ServedModel } from "./served-model.ts";

/** The server's moving parts, as handlers see them. */
export interface ServeContext {
  readonly model: ServedModel;
  readonly scheduler: SequenceScheduler;
}

/** Fields both completion endpoints take. */
export interface SamplingFields {
  readonly model?: string;
  readonly temperature?: number | null;
  readonly top_p?: number | null;
  readonly seed?: number | null;
  readonly stop?: string | readonly string[] | null;
  readonly ignore_eos?: boolean | null;
  readonly polyrl_draw?: DrawPlace | null;
}

/**
 * Refuses prompts whose ids are outside the vocabulary or that leave no room for `maxTokens`
 * in the context (vLLM's check: prompt + max_tokens <= max_model_len).
 *
 * @example
 * ```ts
 * import { checkPrompt } from "./request-context.ts";
 * import type { ServedModel } from "./served-model.ts";
 *
 * declare const served: ServedModel;
 * declare const ids: number[];
 * checkPrompt(served, ids, 16, "prompt"); // an ApiError 400 of param "prompt" unless they fit
 * ```
 */
export function checkPrompt(
  model: ServedModel,
  ids: readonly number[],
  maxTokens: number,
  param: string,
): void {
  if (ids.length === 0) {
    throw new ApiError(400, `${param} is empty; give at least one token`, param);
  }
  const vocab = model.config.vocabSize;
  const bad = ids.find((t) => t >= vocab);
  if (bad !== undefined) {
    throw new ApiError(
      400,
      `${param}: token id ${bad} is outside the vocabulary [0, ${vocab})`,
      param,
    );
  }
  const context = model.config.maxPositionEmbeddings;
  if (ids.length + maxTokens > context) {
    throw new ApiError(
      400,
      `this model's maximum context length is ${context} tokens; the prompt has ${ids.length} ` +
        `and max_tokens asks for ${maxTokens} more: shorten the prompt or lower max_tokens`,
      ids.length >= context ? param : "max_tokens",
    );
  }
}

/**
 * The settings of a request's choices.
 *
 * @example
 * ```ts
 * import { choiceSettings, type ServeContext } from "./request-context.ts";
 *
 * declare const ctx: ServeContext;
 * declare const signal: AbortSignal; // clientAbort(c).signal
 * const body = { model: "embedded", temperature: 0.7, seed: 7, stop: "\n" };
 * const settings = choiceSettings(ctx, body, 16, signal, { score: true, topLogprobs: 2 });
 * ```
 */
export function choiceSettings(
  ctx: ServeContext,
  body: SamplingFields,
  maxTokens: number,
  signal: AbortSignal,
  scoring: { score: boolean; topLogprobs: number },
): ChoiceSettings {
  const stop = body.stop == null ? [] : typeof body.stop === "string" ? [body.stop] : body.stop;
  if (body.polyrl_draw != null && body.seed == null) {
    throw new ApiError(
      400,
      "polyrl_draw names where the draws sit but not the run's seed; send seed too",
      "seed",
    );
  }
  return {
    weights: ctx.model.weightsOf(body.model),
    maxTokens,
    temperature: body.temperature ?? 1,
    topP: body.top_p ?? 1,
    seed: body.seed ?? randomSeed(),
    draw: body.polyrl_draw ?? null,
    stop,
    ignoreEos: body.ignore_eos === true,
    signal,
    ...scoring,
  };
}

/**
 * A controller aborted when the request's client disconnects before its answer is out. Deno's
 * `request.signal` fires only then because deno.json opts in to `no-legacy-abort`: by default
 * (Deno 2.9) it also fires after every successful response, and Deno warns so on stderr.
 *
 * @example
 * ```ts
 * import type { Context } from "hono";
 * import { clientAbort } from "./request-context.ts";
 *
 * declare const c: Context;
 * const abort = clientAbort(c); // abort.signal ends the request's sequences
 * ```
 */
export function clientAbort(c: Context): AbortController {
  const abort = new AbortController();
  c.req.raw.signal.addEventListener("abort", () => abort.abort());
  return abort;
}

/** A token's text as logprobs show it (special tokens spelled out). */
export function tokenText(tokenizer: HfTokenizer, token: number): string {
  return tokenizer.decode([token], { skipSpecialTokens: false });
}

/** An id for a response: `prefix` and 24 random hex digits. */
export function responseId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return prefix + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
