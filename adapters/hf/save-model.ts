/**
 * Saves a model as an HF directory (config.json, generation_config.json, safetensors weights and,
 * optionally, the tokenizer files copied from another directory), so transformers, vLLM and the
 * like load it, and so `loadHfModel` reads it back.
 */
import { join } from "node:path";
import { exists } from "./file-exists.ts";
import { type CheckpointWriteOptions, writeCheckpointTensors } from "./checkpoint-writer.ts";
import type { FloatDtype } from "./dtype.ts";
import { checkTensorShapes } from "./expected-tensors.ts";
import { type ModelConfig, modelConfigToJson } from "./model-config.ts";
import type { NamedTensor } from "./tensor.ts";

/** Tokenizer-side files copied by `tokenizerFrom` when present in the source. */
export const TOKENIZER_FILES: readonly string[] = Object.freeze([
  "tokenizer.json",
  "tokenizer_config.json",
  "chat_template.jinja",
  "special_tokens_map.json",
  "vocab.json",
  "merges.txt",
]);

const TORCH_DTYPE: Readonly<Record<FloatDtype, string>> = Object.freeze({
  F32: "float32",
  F16: "float16",
  BF16: "bfloat16",
});

/** Options for `saveHfModel`. */
export interface SaveOptions extends CheckpointWriteOptions {
  /** Directory whose tokenizer files are copied beside the weights. */
  readonly tokenizerFrom?: string;
}

/**
 * Writes `tensors` and `config` into `dir` (created if absent) and returns the files written.
 * Tensor names and shapes are checked against the config first, so a bad save fails before
 * touching disk.
 * @example
 * ```ts
 * import type { HfModel } from "./load-model.ts";
 * import { saveHfModel } from "./save-model.ts";
 *
 * declare const model: HfModel;
 * declare const outDir: string;
 * await saveHfModel(outDir, model.config, model.tensors, { dtype: "BF16", tokenizerFrom: model.dir });
 * ```
 */
export async function saveHfModel(
  dir: string,
  config: ModelConfig,
  tensors: ReadonlyMap<string, NamedTensor> | readonly NamedTensor[],
  options: SaveOptions = {},
): Promise<string[]> {
  const list: readonly NamedTensor[] = tensors instanceof Map
    ? [...tensors.values()]
    : tensors as readonly NamedTensor[];
  checkTensorShapes(config, new Map(list.map((t) => [t.name, t.shape])), `tensors saved to ${dir}`);
  await Deno.mkdir(dir, { recursive: true });
  const json = modelConfigToJson(config);
  const dtype = options.dtype ?? list[0]?.dtype ?? "F32";
  json[("dtype" in config.raw) ? "dtype" : "torch_dtype"] = TORCH_DTYPE[dtype];
  const written: string[] = [];
  const writeJson = async (name: string, value: unknown) => {
    await Deno.writeTextFile(join(dir, name), JSON.stringify(value, null, 2) + "\n");
    written.push(name);
  };
  await writeJson("config.json", json);
  await writeJson("generation_config.json", {
    bos_token_id: config.bosTokenId,
    eos_token_id: config.eosTokenIds.length === 1 ? config.eosTokenIds[0] : [...config.eosTokenIds],
  });
  written.push(...(await writeCheckpointTensors(dir, list, options)));
  if (options.tokenizerFrom !== undefined) {
    for (const name of TOKENIZER_FILES) {
      const from = join(options.tokenizerFrom, name);
      if (await exists(from)) {
        await Deno.copyFile(from, join(dir, name));
        written.push(name);
      }
    }
  }
  return written;
}
