/**
 * Test fixture: writes a tiny random-weight HF model directory in real formats (config.json,
 * BF16 safetensors split into shards with model.safetensors.index.json, a byte-level BPE
 * tokenizer.json with a Qwen-style split pre-tokenizer and a few merges, tokenizer_config.json with
 * a ChatML template). Deterministic for a given seed; nothing is downloaded. Model tests import
 * `writeTinyCheckpoint` to get a checkpoint for forward-pass checks.
 */
import { join } from "node:path";
import { writeCheckpointTensors } from "../../adapters/hf/checkpoint-writer.ts";
import type { FloatDtype } from "../../adapters/hf/dtype.ts";
import { roundToDtype } from "../../adapters/hf/dtype.ts";
import { byteSymbols, EMBEDDED_CHAT_TEMPLATE } from "../../adapters/hf/embedded-tokenizer.ts";
import { expectedTensors } from "../../adapters/hf/expected-tensors.ts";
import {
  type Architecture,
  type ModelConfig,
  parseModelConfig,
} from "../../adapters/hf/model-config.ts";
import { elementCount, type NamedTensor, namedTensor } from "../../adapters/hf/tensor.ts";

/** Merges of the fixture tokenizer ("Ġ" is the byte-level symbol for a space). */
export const TINY_MERGES: readonly [string, string][] = [["Ġ", "t"], ["h", "e"], ["Ġt", "he"], [
  "1",
  "2",
]];

/** Ids of the fixture tokenizer's special tokens (after 256 bytes and the merged tokens). */
export const TINY_SPECIAL = Object.freeze({ endoftext: 260, imStart: 261, imEnd: 262 });

/** Options of `writeTinyCheckpoint`. */
export interface TinyCheckpointOptions {
  readonly architecture?: Architecture;
  readonly dtype?: FloatDtype;
  /** Small enough to force several shards by default. */
  readonly maxShardBytes?: number;
  readonly seed?: number;
  /** Merged over the generated config.json (e.g. `{ tie_word_embeddings: true }`). */
  readonly configOverrides?: Record<string, unknown>;
}

/** What the fixture wrote: the config and the weights exactly as stored (already dtype-rounded). */
export interface TinyCheckpoint {
  readonly dir: string;
  readonly config: ModelConfig;
  readonly configJson: Record<string, unknown>;
  readonly tensors: ReadonlyMap<string, NamedTensor>;
  readonly files: readonly string[];
}

/** config.json of a 2-layer model: hidden 16, 4 query heads, 2 kv heads, head_dim 4. */
export function tinyConfigJson(architecture: Architecture): Record<string, unknown> {
  return {
    architectures: [architecture],
    model_type: { Qwen2ForCausalLM: "qwen2", Qwen3ForCausalLM: "qwen3", LlamaForCausalLM: "llama" }[
      architecture
    ],
    vocab_size: 272,
    hidden_size: 16,
    intermediate_size: 40,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 4,
    hidden_act: "silu",
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    max_position_embeddings: 128,
    tie_word_embeddings: false,
    bos_token_id: TINY_SPECIAL.endoftext,
    eos_token_id: TINY_SPECIAL.imEnd,
    torch_dtype: "bfloat16",
    use_sliding_window: false,
  };
}

/**
 * Writes the fixture into `dir` (which must exist).
 *
 * @example
 * ```ts
 * import { writeTinyCheckpoint } from "./tiny-checkpoint.ts";
 *
 * const ckpt = await writeTinyCheckpoint(await Deno.makeTempDir());
 * ckpt.config.numLayers; // 2
 * ```
 */
export async function writeTinyCheckpoint(
  dir: string,
  options: TinyCheckpointOptions = {},
): Promise<TinyCheckpoint> {
  const architecture = options.architecture ?? "Qwen2ForCausalLM";
  const dtype = options.dtype ?? "BF16";
  const configJson = { ...tinyConfigJson(architecture), ...options.configOverrides };
  const config = parseModelConfig(configJson);
  const random = uniformSource(options.seed ?? 1);
  const tensors = new Map<string, NamedTensor>();
  for (const t of expectedTensors(config)) {
    if (t.optional) continue;
    const data = new Float32Array(elementCount(t.shape));
    // Norm weights near 1 (as trained models have), everything else small and centred.
    const isNorm = t.name.endsWith("norm.weight");
    for (let i = 0; i < data.length; i++) data[i] = isNorm ? 1 + 0.2 * random() : 0.3 * random();
    tensors.set(t.name, namedTensor(t.name, t.shape, roundToDtype(data, dtype), dtype));
  }
  await Deno.writeTextFile(join(dir, "config.json"), JSON.stringify(configJson, null, 2));
  const files = await writeCheckpointTensors(dir, [...tensors.values()], {
    dtype,
    maxShardBytes: options.maxShardBytes ?? 8_000,
  });
  await writeTinyTokenizer(dir);
  return Object.freeze({ dir, config, configJson, tensors, files: Object.freeze(files) });
}

/** tokenizer.json + tokenizer_config.json of the fixture (Qwen2-like pipeline, tiny vocab). */
export async function writeTinyTokenizer(dir: string): Promise<void> {
  const vocab: Record<string, number> = {};
  byteSymbols().forEach((s, id) => (vocab[s] = id));
  for (const [a, b] of TINY_MERGES) vocab[a + b] = Object.keys(vocab).length;
  const added = Object.entries({
    "<|endoftext|>": TINY_SPECIAL.endoftext,
    "<|im_start|>": TINY_SPECIAL.imStart,
    "<|im_end|>": TINY_SPECIAL.imEnd,
  }).map(([content, id]) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  const tokenizer = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: { type: "NFC" },
    pre_tokenizer: {
      type: "Sequence",
      pretokenizers: [
        {
          type: "Split",
          // Words with an optional leading space, single digits, punctuation runs, whitespace.
          pattern: { Regex: "\\s?\\p{L}+|\\p{N}|\\s?[^\\s\\p{L}\\p{N}]+|\\s+" },
          behavior: "Isolated",
          invert: false,
        },
        { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false },
      ],
    },
    post_processor: null,
    decoder: { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: "",
      end_of_word_suffix: "",
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: TINY_MERGES.map(([a, b]) => [a, b]),
    },
  };
  const config = {
    added_tokens_decoder: Object.fromEntries(added.map(({ id, ...rest }) => [String(id), rest])),
    bos_token: null,
    chat_template: EMBEDDED_CHAT_TEMPLATE,
    clean_up_tokenization_spaces: false,
    eos_token: "<|im_end|>",
    pad_token: "<|endoftext|>",
    tokenizer_class: "Qwen2Tokenizer",
  };
  await Deno.writeTextFile(join(dir, "tokenizer.json"), JSON.stringify(tokenizer));
  await Deno.writeTextFile(join(dir, "tokenizer_config.json"), JSON.stringify(config));
}

/** Deterministic uniform values in [-1, 1) from a 32-bit seed (SplitMix32-style mixing). */
export function uniformSource(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    z = (z ^ (z >>> 16)) >>> 0;
    return z / 2 ** 31 - 1;
  };
}
