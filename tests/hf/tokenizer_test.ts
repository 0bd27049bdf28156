import assert from "node:assert/strict";
import { join } from "node:path";
import { InvalidTokenizerError, MissingFileError } from "../../adapters/hf/errors.ts";
import { loadHfModel } from "../../adapters/hf/load-model.ts";
import { loadTokenizer } from "../../adapters/hf/tokenizer.ts";
import {
  TINY_SPECIAL,
  tinyConfigJson,
  writeTinyCheckpoint,
  writeTinyTokenizer,
} from "./tiny-checkpoint.ts";

async function tokenizerDir(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-tok-" });
  await writeTinyTokenizer(dir);
  return dir;
}

Deno.test("BPE merges, digit splitting and byte-level symbols behave as configured", async () => {
  const dir = await tokenizerDir();
  const tok = await loadTokenizer(dir);
  // Vocab: bytes 0..255 at their byte value, then merges Ġt=256, he=257, Ġthe=258, 12=259.
  assert.deepEqual(tok.encode(" the"), [258]);
  assert.deepEqual(tok.encode("the"), [116, 257]);
  // The split pre-tokenizer isolates each digit, so the "1 2" merge never applies.
  assert.deepEqual(tok.encode("12"), [49, 50]);
  assert.deepEqual(tok.encode("é"), [0xc3, 0xa9], "UTF-8 bytes of U+00E9");
  for (const text of [" the 12 cats", "naïve 😀\n\tx", "a  b"]) {
    assert.equal(tok.decode(tok.encode(text)), text);
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("special tokens map to single ids and can be skipped on decode", async () => {
  const dir = await tokenizerDir();
  const tok = await loadTokenizer(dir);
  assert.deepEqual(
    [...tok.specialTokens],
    [["<|endoftext|>", 260], ["<|im_start|>", 261], ["<|im_end|>", 262]],
  );
  const ids = tok.encode("<|im_start|>the<|im_end|>");
  assert.deepEqual(ids, [261, 116, 257, 262]);
  assert.equal(tok.decode(ids, { skipSpecialTokens: true }), "the");
  assert.deepEqual([tok.eosToken, tok.padToken, tok.padTokenId], [
    "<|im_end|>",
    "<|endoftext|>",
    260,
  ]);
  assert.deepEqual([tok.vocabSize, tok.tokenToId("Ġthe"), tok.idToToken(259)], [263, 258, "12"]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("EOS ids gather tokenizer_config, generation_config and config.json; BOS object form", async () => {
  const dir = await tokenizerDir();
  assert.deepEqual((await loadTokenizer(dir)).eosTokenIds, [TINY_SPECIAL.imEnd]);
  await Deno.writeTextFile(
    join(dir, "generation_config.json"),
    JSON.stringify({ eos_token_id: [262, 260] }),
  );
  await Deno.writeTextFile(join(dir, "config.json"), JSON.stringify({ eos_token_id: 7 }));
  assert.deepEqual((await loadTokenizer(dir)).eosTokenIds, [7, 260, 262]);
  const configPath = join(dir, "tokenizer_config.json");
  const config = JSON.parse(await Deno.readTextFile(configPath));
  await Deno.writeTextFile(
    configPath,
    JSON.stringify({ ...config, bos_token: { content: "<|endoftext|>" } }),
  );
  const tok = await loadTokenizer(dir);
  assert.deepEqual([tok.bosToken, tok.bosTokenId], ["<|endoftext|>", 260]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the chat template renders ChatML and chat_template.jinja takes precedence", async () => {
  const dir = await tokenizerDir();
  const messages = [{ role: "system", content: "Be brief." }, { role: "user", content: "2+2=" }];
  const tok = await loadTokenizer(dir);
  assert.equal(
    tok.chatTemplate!.render(messages),
    "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n2+2=<|im_end|>\n<|im_start|>assistant\n",
  );
  assert.equal(
    tok.chatTemplate!.render(messages.slice(1), { addGenerationPrompt: false }),
    "<|im_start|>user\n2+2=<|im_end|>\n",
  );
  assert.deepEqual(
    tok.encodeChat(messages.slice(1)),
    tok.encode(tok.chatTemplate!.render(messages.slice(1))),
  );
  await Deno.writeTextFile(
    join(dir, "chat_template.jinja"),
    "{% for m in messages %}[{{ m.role }}|{{ m.content }}]{% endfor %}{{ eos_token }}{{ extra_var }}",
  );
  const withFile = await loadTokenizer(dir);
  assert.equal(
    withFile.chatTemplate!.render(messages.slice(1), { extra: { extra_var: "!" } }),
    "[user|2+2=]<|im_end|>!",
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("tokenizer errors: missing file, bad JSON, bad template, unknown eos token", async () => {
  const dir = await tokenizerDir();
  const configPath = join(dir, "tokenizer_config.json");
  const config = JSON.parse(await Deno.readTextFile(configPath));
  await Deno.writeTextFile(configPath, JSON.stringify({ ...config, chat_template: "{% for %}" }));
  await assert.rejects(() => loadTokenizer(dir), InvalidTokenizerError);
  await Deno.writeTextFile(configPath, JSON.stringify({ ...config, eos_token: "</s>" }));
  await assert.rejects(() => loadTokenizer(dir), /eos_token "<\/s>" is not in the vocabulary/);
  const { chat_template: _, ...noTemplate } = config;
  await Deno.writeTextFile(configPath, JSON.stringify(noTemplate));
  const plain = await loadTokenizer(dir);
  assert.equal(plain.chatTemplate, null);
  assert.throws(() => plain.encodeChat([{ role: "user", content: "x" }]), /has no chat_template/);
  await Deno.writeTextFile(configPath, "{not json");
  await assert.rejects(() => loadTokenizer(dir), /tokenizer_config\.json: is not valid JSON/);
  await Deno.remove(join(dir, "tokenizer.json"));
  await assert.rejects(() => loadTokenizer(dir), (e: Error) => {
    assert.ok(e instanceof MissingFileError);
    assert.match(e.message, /tokenizer\.json: expected the tokenizer/);
    return true;
  });
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a tokenizer with more ids than the embedding has rows is refused", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-tok-" });
  await writeTinyCheckpoint(dir, { configOverrides: { vocab_size: 200 } });
  await assert.rejects(
    () => loadHfModel(dir),
    /has 263 token ids but config\.json vocab_size is 200/,
  );
  assert.equal(tinyConfigJson("Qwen2ForCausalLM").vocab_size, 272, "fixture pads vocab like Qwen");
  await Deno.remove(dir, { recursive: true });
});
