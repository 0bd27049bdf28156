/**
 * A model directory's tokenizer: `tokenizer.json` run by @huggingface/tokenizers (pure JS, no
 * network: it is handed the parsed files), special tokens and EOS ids from `tokenizer_config.json`,
 * `generation_config.json` and `config.json`, and the chat template from `chat_template.jinja` or
 * `tokenizer_config.json`.
 */
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { FileReadError, readJsonFile, readRegularTextFile } from "../../events/files/mod.ts";
import {
  type ChatMessage,
  type ChatRenderOptions,
  type ChatTemplate,
  compileChatTemplate,
} from "./chat-template.ts";
import { exists, MODEL_JSON_MAX_BYTES } from "./file-exists.ts";
import { InvalidTokenizerError, MissingFileError } from "./errors.ts";

/** The loaded tokenizer. Ids are plain numbers. */
export interface HfTokenizer {
  readonly kind: "tokenizer";
  /** Highest token id + 1, added tokens included (the embedding must have at least this many rows). */
  readonly vocabSize: number;
  /** Added tokens marked special, content -> id. */
  readonly specialTokens: ReadonlyMap<string, number>;
  readonly bosToken: string | null;
  readonly bosTokenId: number | null;
  readonly eosToken: string | null;
  readonly padToken: string | null;
  readonly padTokenId: number | null;
  /** Every id that ends generation: eos_token plus generation_config/config eos_token_id, sorted. */
  readonly eosTokenIds: readonly number[];
  readonly chatTemplate: ChatTemplate | null;
  /**
   * Token ids of `text`; special tokens written in the text map to their single ids.
   * `addSpecialTokens` (default true) runs the post-processor (e.g. Llama 3 prepends BOS).
   */
  encode(text: string, options?: { addSpecialTokens?: boolean }): number[];
  /**
   * Renders the chat template and encodes it without adding special tokens again (the template
   * writes them), as transformers' `apply_chat_template(tokenize=True)` does.
   */
  encodeChat(messages: readonly ChatMessage[], options?: ChatRenderOptions): number[];
  decode(ids: readonly number[], options?: { skipSpecialTokens?: boolean }): string;
  tokenToId(token: string): number | undefined;
  idToToken(id: number): string | undefined;
}

/**
 * Loads the tokenizer of `dir`; only `tokenizer.json` is required.
 * @example
 * ```ts
 * import { loadTokenizer } from "./tokenizer.ts";
 *
 * const tok = await loadTokenizer("/models/Qwen2.5-0.5B-Instruct");
 * tok.encode(tok.chatTemplate!.render([{ role: "user", content: "1+1=" }]));
 * ```
 */
export async function loadTokenizer(dir: string): Promise<HfTokenizer> {
  const tokenizerPath = join(dir, "tokenizer.json");
  const tokenizerJson = await readJson(tokenizerPath);
  if (tokenizerJson === null) {
    throw new MissingFileError(tokenizerPath, "the tokenizer (a Hugging Face tokenizers export)");
  }
  // An empty model vocabulary still loads, and encodes every text to nothing but special tokens.
  const vocab = (tokenizerJson.model as { vocab?: object } | undefined)?.vocab;
  if (vocab !== undefined && Object.keys(vocab).length === 0) {
    throw new InvalidTokenizerError(
      tokenizerPath,
      "has an empty vocabulary (model.vocab holds no tokens); give the model the tokenizer.json " +
        "it was trained with",
    );
  }
  const config = (await readJson(join(dir, "tokenizer_config.json"))) ?? {};
  const generation = (await readJson(join(dir, "generation_config.json"))) ?? {};
  const modelConfig = (await readJson(join(dir, "config.json"))) ?? {};
  let inner: Tokenizer;
  try {
    inner = new Tokenizer(tokenizerJson, config);
  } catch (e) {
    throw new InvalidTokenizerError(tokenizerPath, `cannot be loaded: ${(e as Error).message}`);
  }
  const specialTokens = new Map<string, number>();
  let maxId = -1;
  for (const id of inner.get_vocab(true).values()) maxId = Math.max(maxId, id);
  for (const [id, added] of inner.get_added_tokens_decoder()) {
    if (added.special) specialTokens.set(added.content, id);
  }
  const tokenField = (field: string): string | null => {
    const v = config[field];
    if (typeof v === "string") return v;
    const content = (v as { content?: unknown } | undefined)?.content;
    return typeof content === "string" ? content : null;
  };
  const idOf = (token: string | null, field: string): number | null => {
    if (token === null) return null;
    const id = inner.token_to_id(token);
    if (id === undefined) {
      throw new InvalidTokenizerError(
        join(dir, "tokenizer_config.json"),
        `${field} ${JSON.stringify(token)} is not in the vocabulary of tokenizer.json`,
      );
    }
    return id;
  };
  const bosToken = tokenField("bos_token");
  const eosToken = tokenField("eos_token");
  const padToken = tokenField("pad_token");
  const eosIds = new Set<number>([
    ...idList(generation.eos_token_id),
    ...idList(modelConfig.eos_token_id),
  ]);
  const eosId = idOf(eosToken, "eos_token");
  if (eosId !== null) eosIds.add(eosId);
  const chatTemplate = await loadChatTemplate(dir, config, {
    bos_token: bosToken,
    eos_token: eosToken,
  });
  return Object.freeze({
    kind: "tokenizer",
    vocabSize: maxId + 1,
    specialTokens,
    bosToken,
    bosTokenId: idOf(bosToken, "bos_token"),
    eosToken,
    padToken,
    padTokenId: idOf(padToken, "pad_token"),
    eosTokenIds: Object.freeze([...eosIds].sort((a, b) => a - b)),
    chatTemplate,
    encode: (text: string, options: { addSpecialTokens?: boolean } = {}) =>
      inner.encode(text, { add_special_tokens: options.addSpecialTokens ?? true }).ids,
    encodeChat: (messages: readonly ChatMessage[], options?: ChatRenderOptions) => {
      if (chatTemplate === null) {
        throw new InvalidTokenizerError(
          join(dir, "tokenizer_config.json"),
          "has no chat_template (and there is no chat_template.jinja)",
        );
      }
      const text = chatTemplate.render(messages, options);
      return inner.encode(text, { add_special_tokens: false }).ids;
    },
    decode: (ids: readonly number[], options: { skipSpecialTokens?: boolean } = {}) =>
      inner.decode([...ids], { skip_special_tokens: options.skipSpecialTokens ?? false }),
    tokenToId: (token: string) => inner.token_to_id(token),
    idToToken: (id: number) => inner.id_to_token(id),
  });
}

async function loadChatTemplate(
  dir: string,
  config: Record<string, unknown>,
  specialTokens: Record<string, string | null>,
): Promise<ChatTemplate | null> {
  // transformers >= 4.43 saves the template beside the config as chat_template.jinja.
  const jinjaPath = join(dir, "chat_template.jinja");
  if (await exists(jinjaPath)) {
    const template = await readRegularTextFile(jinjaPath, { maxBytes: MODEL_JSON_MAX_BYTES });
    return compileChatTemplate(template, jinjaPath, specialTokens);
  }
  const file = join(dir, "tokenizer_config.json");
  const value = config.chat_template;
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return compileChatTemplate(value, file, specialTokens);
  // Older exports list named templates; "default" is the one used for plain chat.
  if (Array.isArray(value)) {
    const named = value.find((t) => t?.name === "default") ?? value[0];
    if (typeof named?.template === "string") {
      return compileChatTemplate(named.template, file, specialTokens);
    }
  }
  throw new InvalidTokenizerError(
    file,
    "chat_template must be a string or a list of {name, template}",
  );
}

function idList(v: unknown): number[] {
  const list = Array.isArray(v) ? v : [v];
  return list.filter((x): x is number => Number.isSafeInteger(x) && x >= 0);
}

async function readJson(path: string): Promise<Record<string, unknown> | null> {
  let json: unknown;
  try {
    json = await readJsonFile(path, { maxBytes: MODEL_JSON_MAX_BYTES });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    if (e instanceof FileReadError) throw new InvalidTokenizerError(path, e.reason);
    throw e;
  }
  if (typeof json === "object" && json !== null && !Array.isArray(json)) {
    return json as Record<string, unknown>;
  }
  throw new InvalidTokenizerError(path, "must hold a JSON object");
}
