/**
 * How the openai rollout backend speaks to each inference engine (`rollout.engine`): the route and
 * body of one turn, how its answer gives the sampled token ids and their logprobs, and the routes
 * that load and unload an adapter.
 *
 * vllm (also deno task serve): `POST /v1/completions` with the prompt as token ids, the adapter as
 * `model`, `logprobs: 0` and `return_token_ids`; the answer's `choices[0].token_ids` and
 * `logprobs.token_logprobs`. Adapters: `POST /v1/load_lora_adapter {lora_name, lora_path}` and
 * `POST /v1/unload_lora_adapter {lora_name}`.
 *
 * sglang: SGLang's OpenAI `/v1/completions` returns logprobs with token texts, not ids, so a turn
 * uses its native `POST /generate` (python/sglang/srt/entrypoints/http_server.py at 0025436e,
 * `generate_request`), whose body is `GenerateReqInput` (python/sglang/srt/managers/io_struct.py
 * at 001067ff): `input_ids`, `sampling_params` (`max_new_tokens`, `temperature`, `top_p`,
 * `sampling_seed`: python/sglang/srt/sampling/sampling_params.py), `return_logprob`, and
 * `lora_path`, which names a loaded adapter (absent: the base). The answer's
 * `meta_info.output_token_logprobs` holds one `[logprob, token_id, text|null]` per sampled token
 * (tokenizer_manager.py, `detokenize_logprob_tokens`), and `meta_info.finish_reason` is
 * `{type: "stop" | "length" | "abort", ...}`. Adapters: `POST /load_lora_adapter {lora_name,
 * lora_path}` and `POST /unload_lora_adapter {lora_name}` (http_server.py, `load_lora_adapter` and
 * `unload_lora_adapter`), no `/v1`; both answer `{success, error_message, loaded_adapters}`, 200
 * on success and 400 otherwise.
 *
 * Both bodies carry the run's seed (`seed`, `sampling_seed`) and polyrl's `polyrl_draw` (the local
 * speaker's draw coordinates), with which deno task serve samples what the local backend would;
 * vLLM and SGLang ignore that unknown top-level field.
 */
import type { ROLLOUT_ENGINES } from "../../config/mod.ts";

/** An engine the servers run. */
export type RolloutEngine = (typeof ROLLOUT_ENGINES)[number];

/** One turn's request, whatever the engine. */
export interface TurnRequest {
  readonly prompt: readonly number[];
  /** The adapter's served name, or null for the base model. */
  readonly adapter: string | null;
  /** The base model's served name (vLLM's `model` for a frozen group). */
  readonly base: string;
  readonly maxTokens: number;
  readonly temperature: number;
  readonly topP: number;
  readonly seed: number;
  readonly draw: Readonly<Record<string, string | number>>;
}

/** What a turn's answer must give. */
export interface TurnAnswer {
  readonly tokens: number[];
  readonly logprobs: number[];
  readonly finish: "stop" | "length";
}

/** An engine's routes and shapes. */
export interface EngineDialect {
  readonly turnPath: string;
  turnBody(turn: TurnRequest): unknown;
  /** The tokens and logprobs of an answer; a string says what is missing. */
  readAnswer(json: unknown): TurnAnswer | string;
  readonly loadPath: string;
  readonly unloadPath: string;
}

const vllm: EngineDialect = {
  turnPath: "/v1/completions",
  turnBody: (t) => ({
    model: t.adapter ?? t.base,
    prompt: t.prompt,
    max_tokens: t.maxTokens,
    temperature: t.temperature,
    top_p: t.topP,
    seed: t.seed,
    logprobs: 0,
    return_token_ids: true,
    polyrl_draw: t.draw,
  }),
  readAnswer(json) {
    const choice = (json as { choices?: unknown[] } | null)?.choices?.[0] as {
      token_ids?: unknown;
      logprobs?: { token_logprobs?: unknown } | null;
      finish_reason?: unknown;
    } | undefined;
    const tokens = choice?.token_ids;
    const logprobs = choice?.logprobs?.token_logprobs;
    if (!isIds(tokens) || !isNumbers(logprobs) || logprobs.length !== tokens.length) {
      return "the answer has no choices[0].token_ids with one logprob each; the rollout backend " +
        "needs a server that returns them (vLLM's return_token_ids, deno task serve)";
    }
    return { tokens, logprobs, finish: choice!.finish_reason === "length" ? "length" : "stop" };
  },
  loadPath: "/v1/load_lora_adapter",
  unloadPath: "/v1/unload_lora_adapter",
};

const sglang: EngineDialect = {
  turnPath: "/generate",
  turnBody: (t) => ({
    input_ids: t.prompt,
    sampling_params: {
      max_new_tokens: t.maxTokens,
      temperature: t.temperature,
      top_p: t.topP,
      sampling_seed: t.seed,
    },
    return_logprob: true,
    ...(t.adapter === null ? {} : { lora_path: t.adapter }),
    polyrl_draw: t.draw,
  }),
  readAnswer(json) {
    const meta = (json as { meta_info?: unknown } | null)?.meta_info as {
      output_token_logprobs?: unknown;
      finish_reason?: { type?: unknown } | null;
    } | undefined;
    const entries = meta?.output_token_logprobs;
    if (
      !Array.isArray(entries) ||
      !entries.every((e) =>
        Array.isArray(e) && typeof e[0] === "number" && Number.isInteger(e[1]) && e[1] >= 0
      )
    ) {
      return "the answer has no meta_info.output_token_logprobs of [logprob, token_id, text] " +
        "entries; send return_logprob (SGLang's /generate, deno task serve)";
    }
    const type = meta!.finish_reason?.type;
    if (type !== "stop" && type !== "length") {
      return `the generation ended with finish_reason ${JSON.stringify(meta!.finish_reason)}, ` +
        'not "stop" or "length"';
    }
    return {
      tokens: entries.map((e) => e[1] as number),
      logprobs: entries.map((e) => e[0] as number),
      finish: type,
    };
  },
  loadPath: "/load_lora_adapter",
  unloadPath: "/unload_lora_adapter",
};

/**
 * The dialect of `engine` (absent: vllm).
 *
 * @example
 * ```ts
 * import { engineDialect } from "./engine-dialect.ts";
 *
 * engineDialect("sglang").loadPath; // "/load_lora_adapter"
 * ```
 */
export function engineDialect(engine: RolloutEngine | undefined): EngineDialect {
  return engine === "sglang" ? sglang : vllm;
}

function isIds(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((t) => Number.isInteger(t) && t >= 0);
}

function isNumbers(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((x) => typeof x === "number");
}
