/**
 * A model's Jinja chat template, compiled once with @huggingface/jinja (the renderer transformers.js
 * uses) and rendered with the variables transformers passes: `messages`, `add_generation_prompt`,
 * `bos_token`, `eos_token`, plus caller extras such as `enable_thinking`.
 */
import { Template } from "@huggingface/jinja";
import { InvalidTokenizerError } from "./errors.ts";

/** One chat turn. */
export interface ChatMessage {
  readonly role: string;
  readonly content: string;
}

/** Options for `ChatTemplate.render`. */
export interface ChatRenderOptions {
  /** Append the header that opens the assistant's reply (default true). */
  readonly addGenerationPrompt?: boolean;
  /** Further template variables (e.g. `{ enable_thinking: false }` for Qwen3). */
  readonly extra?: Readonly<Record<string, unknown>>;
}

/** A compiled chat template. */
export interface ChatTemplate {
  readonly kind: "chat-template";
  readonly source: string;
  render(messages: readonly ChatMessage[], options?: ChatRenderOptions): string;
}

/**
 * Compiles `source`; a syntax error becomes an InvalidTokenizerError naming `file`.
 * @example
 * ```ts
 * import { compileChatTemplate } from "./chat-template.ts";
 *
 * declare const src: string; // the Jinja template of tokenizer_config.json
 * compileChatTemplate(src, "tokenizer_config.json", { eos_token: "<|im_end|>" })
 *   .render([{ role: "user", content: "2+2=" }]);
 * ```
 */
export function compileChatTemplate(
  source: string,
  file: string,
  specialTokens: Readonly<Record<string, string | null>>,
): ChatTemplate {
  let template: Template;
  try {
    template = new Template(source);
  } catch (e) {
    throw new InvalidTokenizerError(file, `chat template does not parse: ${(e as Error).message}`);
  }
  return Object.freeze({
    kind: "chat-template",
    source,
    render: (messages: readonly ChatMessage[], options: ChatRenderOptions = {}) =>
      template.render({
        ...specialTokens,
        ...options.extra,
        messages: messages.map((m) => ({ ...m })),
        add_generation_prompt: options.addGenerationPrompt ?? true,
      }),
  });
}
