/** How `deno task export-model` names an adapter's base without a path of this machine. */
import { relative } from "node:path";

/** A model directory as adapter_config.json names it: `name` and, from the Hub, `revision`. */
export interface BaseModelReference {
  readonly name: string;
  readonly revision: string | null;
}

/**
 * What an adapter's `base_model_name_or_path` says for the base in `modelDir`. PEFT's
 * AutoPeftModel hands it to transformers' `from_pretrained`, which takes a Hub repo id or a path
 * (peft src/peft/auto.py). A model in the Hugging Face Hub cache
 * (`.../models--ORG--NAME/snapshots/COMMIT`, repo ids never contain `--`) is its repo id at that
 * commit; any other directory, the embedded model included, is its path from the adapter folder,
 * which stays right when the clone moves and names nothing outside it.
 *
 * @example
 * ```ts
 * import { baseModelReference } from "./base-model-reference.ts";
 *
 * baseModelReference("/h/models--Qwen--Qwen2.5-0.5B/snapshots/abc", "/o/a");
 * // { name: "Qwen/Qwen2.5-0.5B", revision: "abc" }
 * baseModelReference("/repo/adapters/model/embedded", "/repo/out/solver");
 * // { name: "../../adapters/model/embedded", revision: null }
 * ```
 */
export function baseModelReference(modelDir: string, adapterDir: string): BaseModelReference {
  const cached = modelDir.match(/\/models--([^/]+)\/snapshots\/([^/]+)$/);
  if (cached) return { name: cached[1].replaceAll("--", "/"), revision: cached[2] };
  return { name: relative(adapterDir, modelDir), revision: null };
}
