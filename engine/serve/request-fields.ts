/**
 * The request bodies the server takes, as zod schemas: OpenAI's fields for `/v1/completions` and
 * `/v1/chat/completions`, vLLM's extras the project uses (`return_token_ids`,
 * `add_generation_prompt`, `chat_template_kwargs`), and vLLM's LoRA bodies. Fields follow
 * vllm/entrypoints/openai/completion/protocol.py at 002032ee (CompletionRequest: prompt as text,
 * texts, token ids or lists of token ids; echo, logprobs, max_tokens default 16, n, seed, stop,
 * stream, stream_options, temperature, top_p; return_token_ids, ignore_eos) and
 * vllm/entrypoints/serve/lora/protocol.py (LoadLoRAAdapterRequest: lora_name, lora_path;
 * UnloadLoRAAdapterRequest: lora_name). Fields OpenAI defines that change sampling in ways this
 * server does not implement (penalties, logit_bias, best_of, suffix) are refused when set to
 * anything but their neutral value, rather than silently ignored; unknown fields are ignored, as
 * vLLM does.
 */
import { z } from "zod";
import { MAX_STOP_STRINGS } from "../config/mod.ts";
import { ApiError } from "./api-error.ts";

/** Choices per prompt at most (`n`). */
export const MAX_N = 64;
/** Prompts of one completion request at most. */
export const MAX_PROMPTS = 64;
/** Choices of one request at most (prompts x n): what one request may put into the batch. */
export const MAX_CHOICES = 256;
/** `logprobs` / `top_logprobs` at most (vLLM's default --max-logprobs is 20). */
export const MAX_LOGPROBS = 20;

const tokenIds = z.array(z.number().int().min(0)).min(1, "a token-id prompt needs at least one id");

/** A field this server does not implement: accepted only at its neutral value. */
const unsupported = <T extends string | number>(neutral: T) =>
  z.literal(neutral, {
    error: `is not supported by this server; leave it out or at ${JSON.stringify(neutral)}`,
  })
    .optional().nullable();

const neutral = {
  presence_penalty: unsupported(0),
  frequency_penalty: unsupported(0),
  logit_bias: z.record(z.string(), unsupported(0)).optional().nullable(),
};

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const id = z.union([z.string().max(256), count]);

/**
 * polyrl's extension: the coordinates of the trainer's own draws for this turn (engine/random,
 * `DrawCoordinates` without the seed), so a served rollout samples exactly what the in-process
 * speaker would. Other servers ignore the field, as they ignore unknown fields.
 */
const drawPlace = z.strictObject({
  purpose: z.string().min(1).max(256),
  step: count.optional(),
  wg: id.optional(),
  agent: id.optional(),
  prompt: id.optional(),
  sample: count.optional(),
  turn: count.optional(),
});

const sampling = {
  model: z.string().optional(),
  max_tokens: z.number().int().min(0).optional().nullable(),
  temperature: z.number().min(0).max(2).optional().nullable(),
  top_p: z.number().gt(0).max(1).optional().nullable(),
  n: z.number().int().min(1).max(MAX_N).optional().nullable(),
  seed: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().nullable(),
  stop: z.union([
    z.string().min(1),
    z.array(z.string().min(1)).max(MAX_STOP_STRINGS),
  ]).optional().nullable(),
  stream: z.boolean().optional().nullable(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).optional().nullable(),
  return_token_ids: z.boolean().optional().nullable(),
  ignore_eos: z.boolean().optional().nullable(),
  polyrl_draw: drawPlace.optional().nullable(),
  user: z.string().optional().nullable(),
  ...neutral,
};

/** A `/v1/completions` body. */
export const completionRequest = z.object({
  ...sampling,
  prompt: z.union([
    z.string(),
    z.array(z.string()).min(1).max(MAX_PROMPTS),
    tokenIds,
    z.array(tokenIds).min(1).max(MAX_PROMPTS),
  ]),
  echo: z.boolean().optional().nullable(),
  logprobs: z.number().int().min(0).max(MAX_LOGPROBS).optional().nullable(),
  best_of: unsupported(1),
  suffix: unsupported(""),
});
export type CompletionRequest = z.output<typeof completionRequest>;

const textPart = z.object({ type: z.literal("text"), text: z.string() });

/** A `/v1/chat/completions` body. */
export const chatRequest = z.object({
  ...sampling,
  messages: z.array(
    z.object({
      role: z.enum(["system", "developer", "user", "assistant", "tool"]),
      content: z.union([z.string(), z.array(textPart)]),
    }),
  ).min(1).max(4096),
  max_completion_tokens: z.number().int().min(1).optional().nullable(),
  logprobs: z.boolean().optional().nullable(),
  top_logprobs: z.number().int().min(0).max(MAX_LOGPROBS).optional().nullable(),
  add_generation_prompt: z.boolean().optional().nullable(),
  chat_template_kwargs: z.record(z.string(), z.unknown()).optional().nullable(),
});
export type ChatRequest = z.output<typeof chatRequest>;

// No ':' in a name: SGLang's `BASE:NAME` picks adapter NAME, so an adapter named `embedded:x`
// would capture the requests meant for adapter `x` of the base `embedded`.
const adapterName = z.string().min(1).max(256)
  .refine(
    (name) => !name.includes(":"),
    "':' is not allowed in an adapter name: `BASE:NAME` names adapter NAME of the base " +
      "(SGLang's syntax); pick a name without ':'",
  )
  .regex(/^[\w.@/+-]+$/, "use letters, digits and . _ - @ / + only");

/** vLLM's `POST /v1/load_lora_adapter` body; SGLang's `POST /load_lora_adapter` has the same. */
export const loadAdapterRequest = z.object({
  lora_name: adapterName,
  lora_path: z.string().min(1),
});
/** vLLM's `POST /v1/unload_lora_adapter` body; SGLang's `/unload_lora_adapter` sends lora_name. */
export const unloadAdapterRequest = z.object({
  lora_name: adapterName,
  lora_int_id: z.number().int().optional().nullable(),
});

/**
 * SGLang's native `POST /generate` body, only the fields the sglang rollout dialect sends
 * (GenerateReqInput, python/sglang/srt/managers/io_struct.py at 001067ff): one prompt as
 * `input_ids`, `sampling_params` (SamplingParams: `max_new_tokens` default 128, `temperature`,
 * `top_p`, `sampling_seed`, `stop`, `ignore_eos`; SGLang refuses a sampling parameter it does
 * not know, and so does this server), `return_logprob`, `lora_path` (a loaded adapter's name),
 * and polyrl's `polyrl_draw`. Text prompts, batches and streaming are refused, not ignored.
 */
export const generateRequest = z.object({
  input_ids: tokenIds,
  text: z.never({ error: "is not supported by this server; send the prompt as input_ids" })
    .optional().nullable(),
  sampling_params: z.strictObject({
    max_new_tokens: z.number().int().min(1).optional().nullable(),
    temperature: z.number().min(0).max(2).optional().nullable(),
    top_p: z.number().gt(0).max(1).optional().nullable(),
    sampling_seed: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().nullable(),
    stop: sampling.stop,
    ignore_eos: z.boolean().optional().nullable(),
  }).optional().nullable(),
  return_logprob: z.boolean().optional().nullable(),
  lora_path: z.string().min(1).max(256).optional().nullable(),
  stream: z.literal(false, { error: "streaming is not supported by this server's /generate" })
    .optional().nullable(),
  polyrl_draw: drawPlace.optional().nullable(),
});
export type GenerateRequest = z.output<typeof generateRequest>;

/**
 * Parses a JSON body against `schema`; a 400 naming the first bad field otherwise.
 *
 * @example
 * ```ts
 * import type { Context } from "hono";
 * import { completionRequest, parseBody } from "./request-fields.ts";
 *
 * declare const c: Context;
 * const body = parseBody(completionRequest, await c.req.text());
 * parseBody(completionRequest, '{"prompt": "1 + 1 ="}').prompt; // "1 + 1 ="
 * ```
 */
export function parseBody<S extends z.ZodType>(schema: S, text: string): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ApiError(400, `the body is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new ApiError(400, "the body must be a JSON object");
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const param = issue.path.join(".") || null;
  const value = issue.path.reduce<unknown>(
    (v, k) => (v as Record<string | number, unknown> | undefined)?.[k as string],
    json,
  );
  const shown = value === undefined ? "nothing" : JSON.stringify(value)?.slice(0, 80);
  throw new ApiError(
    400,
    `${param ?? "body"}: ${issue.message} (got ${shown})`,
    param,
  );
}
