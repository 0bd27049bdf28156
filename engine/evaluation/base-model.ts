/**
 * The base model a worker group names (`embedded` or an HF directory), loaded with its tokenizer
 * for evaluation and export.
 */
import { type HfModel, loadHfModel } from "../../adapters/hf/mod.ts";
import { loadEmbeddedModel } from "../../adapters/model/mod.ts";
import { EvaluationInputError } from "./errors.ts";

/**
 * Loads `model` with its tokenizer; `field` and `label` name what asked for it in errors.
 *
 * @example
 * ```ts
 * const base = await loadBaseModel("embedded", "--model", "embedded");
 * base.tokenizer; // the embedded model's tokenizer
 * ```
 */
export async function loadBaseModel(model: string, field: string, label: string): Promise<HfModel> {
  const loaded = model === "embedded" ? await loadEmbeddedModel() : await loadHfModel(model);
  if (!loaded.tokenizer) {
    throw new EvaluationInputError(
      field,
      label,
      `model ${model} has no tokenizer.json to prompt it`,
    );
  }
  return loaded;
}
