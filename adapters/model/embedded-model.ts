/**
 * The embedded base model: a small Qwen2-architecture decoder (about 1.2M parameters) over the
 * embedded byte-level tokenizer, initialized deterministically from a seed and stored as a real HF
 * directory (config.json, model.safetensors, tokenizer files) so it loads like any checkpoint
 * and in other tools. `deno task pretrain` trains it and writes the committed copy. A `small`
 * variant of the same family (4 layers, width 96, ~0.5M parameters) serves heterogeneous teams.
 */
import {
  EMBEDDED_SPECIAL_TOKENS,
  EMBEDDED_TOKENIZER_DIR,
  EMBEDDED_VOCAB_SIZE,
  type HfModel,
  loadHfModel,
  type ModelConfig,
  type NamedTensor,
  parseModelConfig,
  saveHfModel,
} from "../hf/mod.ts";
import { ModelError } from "./errors.ts";
import { initBaseTensors, type NormalFill } from "./init.ts";

/** config.json of the embedded model. */
export const EMBEDDED_MODEL_CONFIG_JSON: Readonly<Record<string, unknown>> = Object.freeze({
  architectures: ["Qwen2ForCausalLM"],
  model_type: "qwen2",
  vocab_size: EMBEDDED_VOCAB_SIZE,
  hidden_size: 128,
  intermediate_size: 384,
  num_hidden_layers: 6,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 32,
  hidden_act: "silu",
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  max_position_embeddings: 1024,
  tie_word_embeddings: true,
  initializer_range: 0.02,
  bos_token_id: EMBEDDED_SPECIAL_TOKENS["<|endoftext|>"],
  eos_token_id: EMBEDDED_SPECIAL_TOKENS["<|im_end|>"],
  torch_dtype: "float32",
  use_sliding_window: false,
});

/** The embedded model's sizes: `base` is the committed default, `small` a narrower, shallower twin. */
export type EmbeddedSize = "base" | "small";
export const EMBEDDED_SIZES: readonly EmbeddedSize[] = Object.freeze(["base", "small"]);

const SIZE_OVERRIDES: Readonly<Record<EmbeddedSize, Readonly<Record<string, unknown>>>> = {
  base: {},
  small: {
    hidden_size: 96,
    intermediate_size: 288,
    num_hidden_layers: 4,
    num_attention_heads: 3,
    num_key_value_heads: 1,
  },
};

/** Where the committed, pretrained embedded model lives. */
export const EMBEDDED_MODEL_DIR = new URL("./embedded/", import.meta.url);

/**
 * The parsed embedded config of a size.
 *
 * @example
 * ```ts
 * import { embeddedModelConfig } from "./embedded-model.ts";
 *
 * embeddedModelConfig().hiddenSize; // 128
 * ```
 */
export function embeddedModelConfig(size: EmbeddedSize = "base"): ModelConfig {
  return parseModelConfig(
    { ...EMBEDDED_MODEL_CONFIG_JSON, ...SIZE_OVERRIDES[size] },
    `embedded model config (${size})`,
  );
}

/**
 * Fresh weights of the embedded model; the same `normal` draws give the same bytes.
 *
 * @example
 * ```ts
 * import { initEmbeddedModel } from "./embedded-model.ts";
 * import type { NormalFill } from "./init.ts";
 *
 * declare const normal: NormalFill; // keyed N(0, std^2) draws (engine/random's fillNormal)
 * const tensors = initEmbeddedModel(normal);
 * ```
 */
export function initEmbeddedModel(normal: NormalFill, size: EmbeddedSize = "base"): NamedTensor[] {
  return initBaseTensors(embeddedModelConfig(size), normal);
}

/**
 * Writes weights of the embedded architecture as an HF directory with the embedded tokenizer.
 *
 * @example
 * ```ts
 * import type { NamedTensor } from "../hf/mod.ts";
 * import { saveEmbeddedModel } from "./embedded-model.ts";
 *
 * declare const tensors: readonly NamedTensor[]; // e.g. initEmbeddedModel(normal), or trained ones
 * await saveEmbeddedModel("/tmp/embedded-copy", tensors);
 * ```
 */
export async function saveEmbeddedModel(
  dir: string,
  tensors: readonly NamedTensor[] | ReadonlyMap<string, NamedTensor>,
  size: EmbeddedSize = "base",
): Promise<string[]> {
  return await saveHfModel(dir, embeddedModelConfig(size), tensors, {
    dtype: "F32",
    tokenizerFrom: EMBEDDED_TOKENIZER_DIR.pathname,
  });
}

/**
 * Loads the committed embedded model (or the one in `dir`).
 *
 * @example
 * ```ts
 * import { loadEmbeddedModel } from "./embedded-model.ts";
 *
 * const model = await loadEmbeddedModel();
 * model.config.hiddenSize; // 128
 * ```
 */
export async function loadEmbeddedModel(
  dir: string = EMBEDDED_MODEL_DIR.pathname,
): Promise<HfModel> {
  try {
    await Deno.stat(`${dir}/config.json`);
  } catch {
    throw new ModelError("embedded model", `no checkpoint at ${dir}; run \`deno task pretrain\``);
  }
  return await loadHfModel(dir);
}
