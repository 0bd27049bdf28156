/**
 * `POST /v1/chat/completions`: the messages rendered with the checkpoint's chat template
 * (@huggingface/jinja through adapters/hf, the generation prompt appended), then sampled like a
 * completion. Follows vllm/entrypoints/openai/chat_completion/serving.py and protocol.py: choice
 * `message` {role: assistant, content}; `logprobs: true` gives `logprobs.content`, one entry per
 * token {token, logprob, bytes, top_logprobs[top_logprobs]}; streaming
 * (`chat_completion_stream_generator`) first sends each choice a chunk declaring the role with
 * empty content and no logprobs (with `prompt_token_ids`), then content deltas, then the finish
 * reason; vLLM's `add_generation_prompt` and
 * `chat_template_kwargs` pass to the template; `return_token_ids` (on by default here) adds
 * `prompt_token_ids` to the response and `token_ids` to each choice.
 */
import type { Context } from "hono";
import { ApiError } from "./api-error.ts";
import { eventStream } from "./event-stream.ts";
import { type ChoiceResult, runChoice } from "./generation.ts";
import { chatRequest, parseBody } from "./request-fields.ts";
import {
  checkPrompt,
  choiceSettings,
  clientAbort,
  responseId,
  type ServeContext,
  tokenText,
} from "./request-context.ts";
import { noteUsage } from "./request-log.ts";
import type { ScoredToken } from "./sampling.ts";

const encoder = new TextEncoder();

function logprobEntry(ctx: ServeContext, s: ScoredToken, top: boolean) {
  const entry = (token: number, logprob: number) => {
    const text = tokenText(ctx.model.tokenizer, token);
    return { token: text, logprob, bytes: [...encoder.encode(text)] };
  };
  return {
    ...entry(s.token, s.logprob),
    top_logprobs: top ? s.top.map((t) => entry(t.token, t.logprob)) : [],
  };
}

/**
 * Handles one chat completions request.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { chatCompletions } from "./chat-completions.ts";
 * import type { ServeContext } from "./request-context.ts";
 * import type { ServeEnv } from "./request-log.ts";
 *
 * declare const ctx: ServeContext;
 * const app = new Hono<ServeEnv>();
 * app.post("/v1/chat/completions", (c) => chatCompletions(c, ctx));
 * ```
 */
export async function chatCompletions(c: Context, ctx: ServeContext): Promise<Response> {
  const body = parseBody(chatRequest, await c.req.text());
  const tokenizer = ctx.model.tokenizer;
  if (tokenizer.chatTemplate === null) {
    throw new ApiError(
      400,
      `the model ${ctx.model.name} has no chat template (chat_template.jinja or ` +
        "tokenizer_config.json chat_template); use /v1/completions with a prompt",
      "messages",
    );
  }
  const messages = body.messages.map((m) => ({
    role: m.role,
    content: typeof m.content === "string" ? m.content : m.content.map((p) => p.text).join(""),
  }));
  let ids: number[];
  try {
    ids = tokenizer.encodeChat(messages, {
      addGenerationPrompt: body.add_generation_prompt ?? true,
      extra: body.chat_template_kwargs ?? undefined,
    });
  } catch (err) {
    throw new ApiError(
      400,
      `the chat template failed on these messages: ${(err as Error).message}`,
      "messages",
    );
  }
  const context = ctx.model.config.maxPositionEmbeddings;
  // Without a limit a reply may fill the context (vLLM's default for chat).
  const maxTokens = body.max_completion_tokens ?? body.max_tokens ??
    Math.max(1, context - ids.length);
  if (maxTokens < 1) throw new ApiError(400, "max_tokens must be at least 1", "max_tokens");
  checkPrompt(ctx.model, ids, maxTokens, "messages");
  const wantLogprobs = body.logprobs === true;
  if (body.top_logprobs != null && !wantLogprobs) {
    throw new ApiError(400, "top_logprobs needs logprobs: true", "top_logprobs");
  }
  const abort = clientAbort(c);
  const settings = choiceSettings(ctx, body, maxTokens, abort.signal, {
    score: wantLogprobs,
    topLogprobs: body.top_logprobs ?? 0,
  });
  const n = body.n ?? 1;
  const withIds = body.return_token_ids !== false;
  const id = responseId("chatcmpl-");
  const created = Math.floor(Date.now() / 1000);
  const model = body.model ?? ctx.model.name;
  const top = body.top_logprobs != null;
  // The answer's usage, noted for the request log as it is made.
  const usage = (results: readonly ChoiceResult[]) => {
    const completion = results.reduce((s, r) => s + r.text.tokens.length, 0);
    noteUsage(c, { model, promptTokens: ids.length, completionTokens: completion });
    return {
      prompt_tokens: ids.length,
      completion_tokens: completion,
      total_tokens: ids.length + completion,
    };
  };

  if (body.stream === true) {
    return eventStream(c, abort, async (send) => {
      const chunk = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
        send({ id, object: "chat.completion.chunk", created, model, choices: [choice], ...extra });
      const results = await Promise.all(Array.from({ length: n }, async (_, index) => {
        chunk(
          { index, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null },
          withIds ? { prompt_token_ids: ids } : {},
        );
        const result = await runChoice(
          ctx.scheduler,
          tokenizer,
          ids,
          index,
          settings,
          (step) =>
            chunk({
              index,
              delta: { content: step.piece },
              logprobs: step.scored ? { content: [logprobEntry(ctx, step.scored, top)] } : null,
              finish_reason: null,
              ...(withIds ? { token_ids: [step.token] } : {}),
            }),
        );
        chunk({
          index,
          delta: { content: result.text.take(true) },
          logprobs: null,
          finish_reason: result.finishReason,
          stop_reason: result.stopReason,
        });
        return result;
      }));
      const counts = usage(results);
      if (body.stream_options?.include_usage) {
        send({ id, object: "chat.completion.chunk", created, model, choices: [], usage: counts });
      }
    });
  }

  const results = await Promise.all(
    Array.from(
      { length: n },
      (_, index) => runChoice(ctx.scheduler, tokenizer, ids, index, settings),
    ),
  );
  const counts = usage(results);
  if (abort.signal.aborted) return new Response(null, { status: 499 });
  return c.json({
    id,
    object: "chat.completion",
    created,
    model,
    choices: results.map((r, index) => ({
      index,
      message: { role: "assistant", content: r.text.text },
      logprobs: wantLogprobs ? { content: r.scored.map((s) => logprobEntry(ctx, s, top)) } : null,
      finish_reason: r.finishReason,
      stop_reason: r.stopReason,
      ...(withIds ? { token_ids: r.text.tokens } : {}),
    })),
    usage: counts,
    ...(withIds ? { prompt_token_ids: ids } : {}),
  });
}
