/**
 * `POST /v1/completions`: OpenAI's completions on the served base or a loaded adapter (picked by
 * `model`), with vLLM's token ids. Follows vllm/entrypoints/openai/completion/serving.py at
 * 030ea52e (`completion_stream_generator`: choice index = output.index + prompt_idx * n, the
 * prompt's ids on a choice's first chunk, each chunk's own token ids, a last chunk with `usage`
 * and no choices; `request_output_to_completion_response`: echo puts the prompt before the text
 * and its logprobs before the completion's) and protocol.py at 002032ee. `logprobs` = k gives
 * each token's logprob and the k most likely (plus the sampled one) in `top_logprobs`, with
 * `text_offset`. `return_token_ids` is on by default here; unlike vLLM, `token_ids` holds the
 * completion's ids alone even with `echo` (the prompt's are in `prompt_token_ids`).
 */
import type { Context } from "hono";
import { ApiError } from "./api-error.ts";
import { eventStream } from "./event-stream.ts";
import { type ChoiceResult, runChoice } from "./generation.ts";
import {
  type CompletionRequest,
  completionRequest,
  MAX_CHOICES,
  parseBody,
} from "./request-fields.ts";
import {
  checkPrompt,
  choiceSettings,
  clientAbort,
  responseId,
  type ServeContext,
  tokenText,
} from "./request-context.ts";
import { noteUsage } from "./request-log.ts";
import { type ScoredToken, scoreToken } from "./sampling.ts";

interface Prompt {
  readonly ids: readonly number[];
  readonly text: string;
}

function prompts(ctx: ServeContext, body: CompletionRequest): Prompt[] {
  const tok = ctx.model.tokenizer;
  const p = body.prompt;
  const list: (string | number[])[] = typeof p === "string"
    ? [p]
    : typeof p[0] === "number"
    ? [p as number[]]
    : (p as (string | number[])[]);
  return list.map((one) =>
    typeof one === "string"
      ? { ids: tok.encode(one), text: one }
      : { ids: one, text: tok.decode(one, { skipSpecialTokens: false }) }
  );
}

/** OpenAI's completion logprobs of some scored tokens, their text starting at `offset`. */
function logprobsOf(
  ctx: ServeContext,
  scored: readonly (ScoredToken | null)[],
  tokens: readonly number[],
  offsets: readonly number[],
) {
  const tok = ctx.model.tokenizer;
  return {
    tokens: tokens.map((t) => tokenText(tok, t)),
    token_logprobs: scored.map((s) => s?.logprob ?? null),
    top_logprobs: scored.map((s) =>
      s === null ? null : Object.fromEntries(
        [{ token: s.token, logprob: s.logprob }, ...s.top].map((e) => [
          tokenText(tok, e.token),
          e.logprob,
        ]),
      )
    ),
    text_offset: [...offsets],
  };
}

/** The prompt's own logprobs for `echo` (the first token has none), at the request's temperature. */
async function promptScores(
  ctx: ServeContext,
  weights: string,
  ids: readonly number[],
  temperature: number,
  k: number,
): Promise<(ScoredToken | null)[]> {
  const logits = await ctx.model.promptLogits(weights, ids);
  const vocab = ctx.model.config.vocabSize;
  return ids.map((token, i) =>
    i === 0 ? null : scoreToken(logits.subarray((i - 1) * vocab, i * vocab), token, temperature, k)
  );
}

/** Character offsets of each prompt token in the prompt's text. */
function promptOffsets(ctx: ServeContext, ids: readonly number[]): number[] {
  return ids.map((_, i) => i === 0 ? 0 : ctx.model.tokenizer.decode(ids.slice(0, i)).length);
}

/**
 * Handles one completions request.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { completions } from "./completions.ts";
 * import type { ServeContext } from "./request-context.ts";
 * import type { ServeEnv } from "./request-log.ts";
 *
 * declare const ctx: ServeContext;
 * const app = new Hono<ServeEnv>();
 * app.post("/v1/completions", (c) => completions(c, ctx));
 * ```
 */
export async function completions(c: Context, ctx: ServeContext): Promise<Response> {
  const body = parseBody(completionRequest, await c.req.text());
  const echo = body.echo === true;
  const maxTokens = body.max_tokens ?? 16;
  if (maxTokens === 0 && !echo) {
    throw new ApiError(400, "max_tokens must be at least 1 (0 only with echo)", "max_tokens");
  }
  const n = body.n ?? 1;
  const wantLogprobs = body.logprobs != null;
  const k = body.logprobs ?? 0;
  const abort = clientAbort(c);
  const settings = choiceSettings(ctx, body, maxTokens, abort.signal, {
    score: wantLogprobs,
    topLogprobs: k,
  });
  const list = prompts(ctx, body);
  const choices = list.length * n;
  if (choices > MAX_CHOICES) {
    throw new ApiError(
      400,
      `${list.length} prompts x n = ${n} asks for ${choices} choices; one request may ask for ` +
        `${MAX_CHOICES} at most: split it`,
      "n",
    );
  }
  list.forEach((p, i) =>
    checkPrompt(ctx.model, p.ids, maxTokens, list.length > 1 ? `prompt.${i}` : "prompt")
  );
  const withIds = body.return_token_ids !== false;
  const id = responseId("cmpl-");
  const created = Math.floor(Date.now() / 1000);
  const model = body.model ?? ctx.model.name;
  const echoScores = echo && wantLogprobs
    ? await Promise.all(
      list.map((p) => promptScores(ctx, settings.weights, p.ids, settings.temperature, k)),
    )
    : null;
  const jobs = list.flatMap((p, i) =>
    Array.from({ length: n }, (_, j) => ({ p, i, index: i * n + j }))
  );
  // The answer's usage, noted for the request log as it is made.
  const usage = (results: readonly (ChoiceResult | null)[]) => {
    const completion = results.reduce((s, r) => s + (r?.text.tokens.length ?? 0), 0);
    const prompt = list.reduce((s, p) => s + p.ids.length, 0);
    noteUsage(c, { model, promptTokens: prompt, completionTokens: completion });
    return {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
    };
  };
  const generate = (job: (typeof jobs)[number], onStep?: Parameters<typeof runChoice>[5]) =>
    maxTokens === 0
      ? Promise.resolve(null)
      : runChoice(ctx.scheduler, ctx.model.tokenizer, job.p.ids, job.index, settings, onStep);

  if (body.stream === true) {
    return eventStream(c, abort, async (send) => {
      const chunk = (choice: Record<string, unknown>) =>
        send({ id, object: "text_completion", created, model, choices: [choice] });
      const results = await Promise.all(jobs.map(async (job) => {
        let first = true;
        // The prompt (echo) and its ids lead the choice's first chunk.
        const lead = () => {
          const head: Record<string, unknown> = {};
          if (first && withIds) head.prompt_token_ids = job.p.ids;
          const text = first && echo ? job.p.text : "";
          const logprobs = first && echoScores
            ? logprobsOf(ctx, echoScores[job.i], job.p.ids, promptOffsets(ctx, job.p.ids))
            : null;
          first = false;
          return { head, text, logprobs };
        };
        const result = await generate(job, (step) => {
          const { head, text, logprobs } = lead();
          const offset = (echo ? job.p.text.length : 0) + step.offset;
          const own = step.scored ? logprobsOf(ctx, [step.scored], [step.token], [offset]) : null;
          chunk({
            index: job.index,
            text: text + step.piece,
            logprobs: own && logprobs ? mergeLogprobs(logprobs, own) : own ?? logprobs,
            finish_reason: null,
            ...head,
            ...(withIds ? { token_ids: [step.token] } : {}),
          });
        });
        const { head, text, logprobs } = lead();
        chunk({
          index: job.index,
          text: text + (result?.text.take(true) ?? ""),
          logprobs,
          finish_reason: result?.finishReason ?? "length",
          stop_reason: result?.stopReason ?? null,
          ...head,
          ...(withIds ? { token_ids: [] } : {}),
        });
        return result;
      }));
      const counts = usage(results);
      if (body.stream_options?.include_usage) {
        send({ id, object: "text_completion", created, model, choices: [], usage: counts });
      }
    });
  }

  const results = await Promise.all(jobs.map((job) => generate(job)));
  const counts = usage(results);
  // The client is gone: nobody reads this (499, nginx's "client closed request").
  if (abort.signal.aborted) return new Response(null, { status: 499 });
  const answers = jobs.map((job, at) => {
    const r = results[at];
    const promptText = echo ? job.p.text : "";
    let logprobs = null;
    if (wantLogprobs) {
      const own = logprobsOf(
        ctx,
        r?.scored ?? [],
        r?.text.tokens ?? [],
        (r?.text.offsets ?? []).map((o) => o + promptText.length),
      );
      logprobs = echoScores
        ? mergeLogprobs(
          logprobsOf(ctx, echoScores[job.i], job.p.ids, promptOffsets(ctx, job.p.ids)),
          own,
        )
        : own;
    }
    return {
      index: job.index,
      text: promptText + (r?.text.text ?? ""),
      logprobs,
      finish_reason: r?.finishReason ?? "length",
      stop_reason: r?.stopReason ?? null,
      ...(withIds ? { prompt_token_ids: job.p.ids, token_ids: r?.text.tokens ?? [] } : {}),
    };
  });
  return c.json({
    id,
    object: "text_completion",
    created,
    model,
    choices: answers,
    usage: counts,
  });
}

type Logprobs = ReturnType<typeof logprobsOf>;

function mergeLogprobs(a: Logprobs, b: Logprobs): Logprobs {
  return {
    tokens: [...a.tokens, ...b.tokens],
    token_logprobs: [...a.token_logprobs, ...b.token_logprobs],
    top_logprobs: [...a.top_logprobs, ...b.top_logprobs],
    text_offset: [...a.text_offset, ...b.text_offset],
  };
}
