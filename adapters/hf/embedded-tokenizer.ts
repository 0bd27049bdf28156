/**
 * The embedded base model's tokenizer, generated deterministically from this file: byte-level BPE
 * with no merges (each UTF-8 byte is one token, so every digit and operator of the math tasks is its
 * own token and no text is out of vocabulary), plus three ChatML special tokens. It is written as a
 * real `tokenizer.json` + `tokenizer_config.json` (with a ChatML chat template) so it loads through
 * the same `loadTokenizer` as any HF model, and other tools can load it too.
 *
 * The committed copy lives in adapters/hf/embedded/; regenerate it with
 * `deno run -A adapters/hf/embedded-tokenizer.ts` (a test checks the copy matches this code).
 */
import { join } from "node:path";

/** Special tokens and their ids (after the 256 byte tokens). */
export const EMBEDDED_SPECIAL_TOKENS: Readonly<Record<string, number>> = Object.freeze({
  "<|endoftext|>": 256,
  "<|im_start|>": 257,
  "<|im_end|>": 258,
});

/** Number of token ids: 256 bytes + the special tokens. */
export const EMBEDDED_VOCAB_SIZE = 259;

/** ChatML: each turn is `<|im_start|>role\ncontent<|im_end|>\n`. */
export const EMBEDDED_CHAT_TEMPLATE = "{%- for message in messages %}" +
  "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}" +
  "{%- endfor %}" +
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

/** Folder of the committed tokenizer files. */
export const EMBEDDED_TOKENIZER_DIR = new URL("./embedded/", import.meta.url);

/**
 * The byte-level alphabet: printable Latin-1 bytes stand for themselves, every other byte is
 * shifted to an unused code point from U+0100 up, so each byte has a visible, unique symbol (the
 * convention byte-level BPE tokenizers use in tokenizer.json).
 */
export function byteSymbols(): string[] {
  const printable = (b: number) =>
    (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const symbols: string[] = [];
  let shifted = 0;
  for (let b = 0; b < 256; b++) {
    symbols.push(String.fromCodePoint(printable(b) ? b : 256 + shifted++));
  }
  return symbols;
}

/**
 * The two files' text, byte-for-byte what is committed.
 * @example
 * ```ts
 * import { embeddedTokenizerFiles } from "./embedded-tokenizer.ts";
 *
 * const files = embeddedTokenizerFiles();
 * JSON.parse(files["tokenizer.json"]).model.type; // "BPE"
 * ```
 */
export function embeddedTokenizerFiles(): Record<
  "tokenizer.json" | "tokenizer_config.json",
  string
> {
  const vocab: Record<string, number> = {};
  byteSymbols().forEach((s, id) => (vocab[s] = id));
  const added = Object.entries(EMBEDDED_SPECIAL_TOKENS).map(([content, id]) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  const byteLevel = {
    type: "ByteLevel",
    add_prefix_space: false,
    trim_offsets: false,
    use_regex: false,
  };
  const tokenizer = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: null,
    decoder: byteLevel,
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: [],
    },
  };
  const config = {
    add_bos_token: false,
    add_eos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: Object.fromEntries(
      added.map(({ id, ...rest }) => [String(id), rest]),
    ),
    bos_token: null,
    chat_template: EMBEDDED_CHAT_TEMPLATE,
    clean_up_tokenization_spaces: false,
    eos_token: "<|im_end|>",
    errors: "replace",
    model_max_length: 4096,
    pad_token: "<|endoftext|>",
    split_special_tokens: false,
    tokenizer_class: "PreTrainedTokenizerFast",
    unk_token: null,
  };
  return {
    "tokenizer.json": JSON.stringify(tokenizer, null, 2) + "\n",
    "tokenizer_config.json": JSON.stringify(config, null, 2) + "\n",
  };
}

/**
 * Writes the embedded tokenizer's files into `dir` (e.g. beside a saved checkpoint).
 * @example
 * ```ts
 * import { writeEmbeddedTokenizer } from "./embedded-tokenizer.ts";
 *
 * declare const checkpointDir: string;
 * await writeEmbeddedTokenizer(checkpointDir);
 * ```
 */
export async function writeEmbeddedTokenizer(dir: string | URL): Promise<void> {
  const base = dir instanceof URL ? dir.pathname : dir;
  for (const [name, text] of Object.entries(embeddedTokenizerFiles())) {
    await Deno.writeTextFile(join(base, name), text);
  }
}

if (import.meta.main) {
  await Deno.mkdir(EMBEDDED_TOKENIZER_DIR, { recursive: true });
  await writeEmbeddedTokenizer(EMBEDDED_TOKENIZER_DIR);
  console.log(`wrote ${EMBEDDED_TOKENIZER_DIR.pathname}`);
}
