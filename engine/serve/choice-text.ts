/**
 * The text of one choice as its tokens arrive: decoded with special tokens skipped, cut before
 * the first stop string (OpenAI and vLLM leave the stop string out of the text, vLLM's
 * `include_stop_str_in_output` defaulting to false: vllm/entrypoints/openai/completion/protocol.py
 * at 002032ee, CompletionRequest), and streamed in safe pieces: a piece never ends inside a
 * character still being spelled out by byte-level tokens (U+FFFD at the end) nor in text that
 * could turn out to begin a stop string. Without stop strings and without a stream to feed, the
 * text is decoded once, at the end (decoding after every token costs a decode of the whole text).
 */
import type { HfTokenizer } from "../../adapters/hf/mod.ts";

/** A choice's text so far. */
export class ChoiceText {
  readonly tokens: number[] = [];
  /** The stop string that ended the text, once one has. */
  stoppedBy: string | null = null;
  #text = "";
  #offsets: number[] = [];
  #sent = 0;
  readonly #holdBack: number;
  /** Decode as tokens arrive (stop strings to catch, or pieces to stream); else once, at the end. */
  readonly #live: boolean;
  #decoded = false;

  constructor(
    private readonly tokenizer: HfTokenizer,
    private readonly stop: readonly string[],
    streaming: boolean,
  ) {
    this.#holdBack = Math.max(0, ...stop.map((s) => s.length - 1));
    this.#live = streaming || stop.length > 0;
  }

  /** Adds a token; true when the text now holds a stop string (the text is cut before it). */
  push(token: number): boolean {
    this.tokens.push(token);
    if (!this.#live) return false;
    this.#offsets.push(this.#text.length);
    if (this.stoppedBy !== null) return true;
    const full = this.tokenizer.decode(this.tokens, { skipSpecialTokens: true });
    // A stop string can only start in text not yet searched, minus its own length (and the few
    // characters a multi-byte character still being spelled out may change).
    const from = Math.max(0, this.#text.length - this.#holdBack - 4);
    let cut = -1;
    for (const s of this.stop) {
      const at = full.indexOf(s, from);
      if (at >= 0 && (cut < 0 || at < cut)) {
        cut = at;
        this.stoppedBy = s;
      }
    }
    this.#text = cut >= 0 ? full.slice(0, cut) : full;
    return cut >= 0;
  }

  /** The whole text (cut before the stop string when one ended it). */
  get text(): string {
    if (!this.#live && !this.#decoded) {
      this.#text = this.tokenizer.decode(this.tokens, { skipSpecialTokens: true });
      this.#decoded = true;
    }
    return this.#text;
  }

  /** Character offset of each token's text in the choice's text (OpenAI's text_offset). */
  get offsets(): readonly number[] {
    if (!this.#live && this.#offsets.length < this.tokens.length) {
      this.#offsets = this.tokens.map((_, i) =>
        i === 0
          ? 0
          : this.tokenizer.decode(this.tokens.slice(0, i), { skipSpecialTokens: true }).length
      );
    }
    return this.#offsets;
  }

  /**
   * The text not yet handed out that is safe to send now; with `final`, all of it.
   *
   * @example
   * ```ts
   * import type { HfTokenizer } from "../../adapters/hf/mod.ts";
   * import { ChoiceText } from "./choice-text.ts";
   *
   * declare const tokenizer: HfTokenizer;
   * declare const newline: number; // a token that spells "\n"
   * const text = new ChoiceText(tokenizer, ["\n\n"], true);
   * text.push(newline);
   * text.take(false); // "": the "\n" may begin the stop string "\n\n"
   * text.take(true); // "\n": at the end, all of it
   * ```
   */
  take(final: boolean): string {
    let end = this.text.length;
    if (!final && this.stoppedBy === null) {
      end -= this.#holdBack;
      while (end > this.#sent && this.#text.charCodeAt(end - 1) === 0xfffd) end--;
    }
    if (end <= this.#sent) return "";
    const piece = this.#text.slice(this.#sent, end);
    this.#sent = end;
    return piece;
  }
}
