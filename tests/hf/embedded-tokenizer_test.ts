import assert from "node:assert/strict";
import {
  byteSymbols,
  EMBEDDED_SPECIAL_TOKENS,
  EMBEDDED_TOKENIZER_DIR,
  EMBEDDED_VOCAB_SIZE,
  embeddedTokenizerFiles,
} from "../../adapters/hf/embedded-tokenizer.ts";
import { loadTokenizer } from "../../adapters/hf/tokenizer.ts";

const dir = EMBEDDED_TOKENIZER_DIR.pathname;

Deno.test("the committed embedded tokenizer files match the generator byte for byte", async () => {
  for (const [name, text] of Object.entries(embeddedTokenizerFiles())) {
    assert.equal(
      await Deno.readTextFile(new URL(name, EMBEDDED_TOKENIZER_DIR)),
      text,
      `${name} is stale: run deno run -A adapters/hf/embedded-tokenizer.ts`,
    );
  }
});

Deno.test("byte symbols are 256 distinct characters; printable ASCII maps to itself", () => {
  const symbols = byteSymbols();
  assert.equal(new Set(symbols).size, 256);
  assert.equal(symbols[0x41], "A");
  assert.equal(symbols[0x20], "Ġ", "space is the first shifted byte after 0x00-0x1F: U+0100 + 32");
  assert.equal(symbols[0x0a], "Ċ", "newline is U+0100 + 10");
});

Deno.test("every byte is its own token id: arithmetic text tokenizes character by character", async () => {
  const tok = await loadTokenizer(dir);
  assert.equal(tok.vocabSize, EMBEDDED_VOCAB_SIZE);
  const text = "Q: 123*45 - (6/7) = ? A: -5529.857";
  assert.deepEqual(tok.encode(text), [...new TextEncoder().encode(text)]);
  for (const s of ["x^2 + 3x = 0\n", "ünïcode → ok", "  spaced  "]) {
    assert.equal(tok.decode(tok.encode(s)), s);
  }
});

Deno.test("embedded special tokens, EOS and ChatML template", async () => {
  const tok = await loadTokenizer(dir);
  assert.deepEqual(Object.fromEntries(tok.specialTokens), EMBEDDED_SPECIAL_TOKENS);
  assert.deepEqual([tok.eosTokenIds, tok.padTokenId, tok.bosToken], [[258], 256, null]);
  const prompt = tok.chatTemplate!.render([{ role: "user", content: "1+1=" }]);
  assert.equal(prompt, "<|im_start|>user\n1+1=<|im_end|>\n<|im_start|>assistant\n");
  const ids = tok.encode(prompt);
  assert.deepEqual(ids.slice(0, 2), [257, 0x75]);
  assert.equal(ids.filter((id) => id >= 256).length, 3, "im_start, im_end, im_start");
});
