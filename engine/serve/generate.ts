/**
 * `POST /generate`: SGLang's native generation route, as far as the sglang rollout dialect uses it
 * (engine/trainer/rollout/engine-dialect.ts): one prompt of token ids on the base or a loaded adapter
 * (`lora_path`), sampled with the request's keyed draws. The answer follows SGLang's
 * (python/sglang/srt/managers/tokenizer_manager.py: `text`, `output_ids` and `meta_info` with
 * `id`, `finish_reason` `{type: "length", length}` or `{type: "stop", matched}` (the stop token's
 * id or the stop string), `prompt_tokens`, `completion_tokens`, and with `return_logprob`
 * `output_token_logprobs` as `[logprob, token_id, null]` per token, `detokenize_logprob_tokens`
 * without return_text_in_logprobs).
 */
import type { Context } from "hono";
import { ApiError } from "./api-error.ts";
import { runChoice } from "./generation.ts";
import { generateRequest, parseBody } from "./request-fields.ts";
import {
  checkPrompt,
  choiceSettings,
  clientAbort,
  responseId,
  type ServeContext,
} from "./request-context.ts";
import { noteUsage } from "./request-log.ts";

/** SGLang's default `max_new_tokens` (python/sglang/srt/sampling/sampling_params.py). */
const DEFAULT_MAX_NEW_TOKENS = 128;

/**
 * Handles one `/generate` request.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { generate } from "./generate.ts";
 * import type { ServeContext } from "./request-context.ts";
 * import type { ServeEnv } from "./request-log.ts";
 *
 * declare const ctx: ServeContext;
 * const app = new Hono<ServeEnv>();
 * app.post("/generate", (c) => generate(c, ctx));
 * ```
 */
export async function generate(c: Context, ctx: ServeContext): Promise<Response> {
  const body = parseBody(generateRequest, await c.req.text());
  const params = body.sampling_params ?? {};
  const adapter = body.lora_path ?? null;
  if (adapter !== null && !ctx.model.adapters().some((a) => a.name === adapter)) {
    const loaded = ctx.model.adapters().map((a) => JSON.stringify(a.name)).join(", ") || "none";
    throw new ApiError(
      400,
      `lora_path ${JSON.stringify(adapter)} is not a loaded adapter (loaded: ${loaded}); load it ` +
        "with POST /load_lora_adapter first, or leave lora_path out for the base model",
      "lora_path",
    );
  }
  const maxTokens = params.max_new_tokens ?? DEFAULT_MAX_NEW_TOKENS;
  checkPrompt(ctx.model, body.input_ids, maxTokens, "input_ids");
  const abort = clientAbort(c);
  const settings = choiceSettings(
    ctx,
    {
      model: adapter ?? undefined,
      temperature: params.temperature,
      top_p: params.top_p,
      seed: params.sampling_seed,
      stop: params.stop,
      ignore_eos: params.ignore_eos,
      polyrl_draw: body.polyrl_draw,
    },
    maxTokens,
    abort.signal,
    { score: body.return_logprob === true, topLogprobs: 0 },
  );
  const result = await runChoice(ctx.scheduler, ctx.model.tokenizer, body.input_ids, 0, settings);
  const tokens = result.text.tokens;
  noteUsage(c, {
    model: adapter ?? ctx.model.name,
    promptTokens: body.input_ids.length,
    completionTokens: tokens.length,
  });
  if (abort.signal.aborted) return new Response(null, { status: 499 });
  const finish = result.finishReason === "length"
    ? { type: "length", length: tokens.length }
    : { type: "stop", matched: result.stopReason ?? tokens.at(-1) ?? null };
  return c.json({
    text: result.text.text,
    output_ids: tokens,
    meta_info: {
      id: responseId(""),
      finish_reason: finish,
      prompt_tokens: body.input_ids.length,
      completion_tokens: tokens.length,
      ...(body.return_logprob === true
        ? { output_token_logprobs: result.scored.map((s, i) => [s.logprob, tokens[i], null]) }
        : {}),
    },
  });
}
