/**
 * Loads a local HF model directory: config.json -> ModelConfig, weights -> named float32 tensors
 * (shapes checked against the config from the headers before any data is read), tokenizer.
 * No network is touched; the directory must already hold the files.
 */
import { join } from "node:path";
import { FileReadError, readJsonFile } from "../../events/files/mod.ts";
import { openCheckpoint } from "./checkpoint-reader.ts";
import {
  InvalidConfigError,
  InvalidTokenizerError,
  MissingFileError,
  NonFiniteWeightError,
} from "./errors.ts";
import { checkTensorShapes } from "./expected-tensors.ts";
import { MODEL_JSON_MAX_BYTES } from "./file-exists.ts";
import { type ModelConfig, parseModelConfig } from "./model-config.ts";
import type { NamedTensor } from "./tensor.ts";
import { type HfTokenizer, loadTokenizer } from "./tokenizer.ts";

/** What `loadHfModel` returns. With tied embeddings `lm_head.weight` may be absent from `tensors`. */
export interface HfModel {
  readonly kind: "hf-model";
  readonly dir: string;
  readonly config: ModelConfig;
  readonly tensors: ReadonlyMap<string, NamedTensor>;
  /** null when loaded with `{ tokenizer: false }`. */
  readonly tokenizer: HfTokenizer | null;
  /** Non-parameter buffers present in the files and skipped (e.g. rotary inv_freq). */
  readonly ignoredTensors: readonly string[];
}

/** Options for `loadHfModel`. */
export interface LoadOptions {
  /** Load tokenizer.json too (default true; then it is required). */
  readonly tokenizer?: boolean;
}

/**
 * @example
 * ```ts
 * import { loadHfModel } from "./load-model.ts";
 *
 * const model = await loadHfModel("/models/Qwen2.5-0.5B-Instruct");
 * model.config.numLayers;
 * model.tensors.get("model.norm.weight")!.data;
 * ```
 */
export async function loadHfModel(dir: string, options: LoadOptions = {}): Promise<HfModel> {
  const config = await readModelConfig(dir);
  using ckpt = await openCheckpoint(dir);
  const infos = await ckpt.info();
  const check = checkTensorShapes(config, new Map(infos.map((t) => [t.name, t.shape])), dir);
  const ignored = new Set(check.ignored);
  const tokenizer = options.tokenizer === false ? null : await loadTokenizer(dir);
  if (tokenizer !== null && tokenizer.vocabSize > config.vocabSize) {
    throw new InvalidTokenizerError(
      join(dir, "tokenizer.json"),
      `has ${tokenizer.vocabSize} token ids but config.json vocab_size is ${config.vocabSize}`,
    );
  }
  const tensors = await ckpt.readAll((name) => !ignored.has(name));
  checkFinite(dir, tensors);
  return Object.freeze({
    kind: "hf-model",
    dir,
    config,
    tensors,
    tokenizer,
    ignoredTensors: check.ignored,
  });
}

/**
 * Throws NonFiniteWeightError for the first NaN or infinite weight: one pass over the float
 * arrays as they are loaded, so a damaged checkpoint is refused before a run is recorded rather
 * than at its first NaN logit.
 */
function checkFinite(dir: string, tensors: ReadonlyMap<string, NamedTensor>): void {
  for (const [name, { data }] of tensors) {
    // A plain loop: a findIndex callback per weight costs ten times as much.
    for (let i = 0; i < data.length; i++) {
      if (!Number.isFinite(data[i])) throw new NonFiniteWeightError(dir, name, i, data[i]);
    }
  }
}

/**
 * Reads and parses `dir/config.json`.
 * @example
 * ```ts
 * import { readModelConfig } from "./load-model.ts";
 *
 * declare const dir: string;
 * (await readModelConfig(dir)).hiddenSize;
 * ```
 */
export async function readModelConfig(dir: string): Promise<ModelConfig> {
  const path = join(dir, "config.json");
  let json: unknown;
  try {
    json = await readJsonFile(path, { maxBytes: MODEL_JSON_MAX_BYTES });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new MissingFileError(path, "the model config (architectures, hidden_size, ...)");
    }
    if (e instanceof FileReadError) throw new InvalidConfigError(path, "(root)", e.reason);
    throw e;
  }
  return parseModelConfig(json, path);
}
