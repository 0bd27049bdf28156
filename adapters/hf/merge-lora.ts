/**
 * Merging a LoRA adapter into its base, as PEFT's `merge_and_unload` does: each adapted linear
 * weight W [out, in] becomes `W + scale * B @ A` (A [r, in], B [out, r], scale = alpha / r, or
 * alpha / sqrt(r) with rsLoRA). PEFT (huggingface/peft 5d602fdb) src/peft/tuners/lora/layer.py:
 * `get_delta_weight` (line 1028) is `transpose(weight_B @ weight_A, fan_in_fan_out) * scaling`,
 * `merge` (line 969) adds it to `base_layer.weight.data`, and `update_layer` (lines 279-281) sets
 * `scaling` to `lora_alpha / r` or `lora_alpha / math.sqrt(r)`. fan_in_fan_out is false for the
 * decoders this project loads (parseLoraConfig refuses it), so no transpose.
 */
import { InvalidAdapterError } from "./errors.ts";
import { type LoraAdapter, loraScale } from "./peft-adapter.ts";
import { type NamedTensor, namedTensor } from "./tensor.ts";

/**
 * The base tensors with every adapted module's weight merged (a new map; untouched tensors are
 * shared with `base`). Each sum is accumulated in float64 and rounded once to float32.
 *
 * @example
 * ```ts
 * import type { HfModel } from "./load-model.ts";
 * import { mergeLoraAdapter } from "./merge-lora.ts";
 * import { loadLoraAdapter } from "./peft-adapter.ts";
 * import { saveHfModel } from "./save-model.ts";
 *
 * declare const model: HfModel; // loaded from modelDir
 * declare const modelDir: string;
 * declare const dir: string; // the adapter's folder
 * declare const out: string;
 * const merged = mergeLoraAdapter(model.tensors, await loadLoraAdapter(dir, model.config));
 * await saveHfModel(out, model.config, merged, { tokenizerFrom: modelDir });
 * ```
 */
export function mergeLoraAdapter(
  base: ReadonlyMap<string, NamedTensor>,
  adapter: LoraAdapter,
): Map<string, NamedTensor> {
  const scale = loraScale(adapter.config);
  const r = adapter.config.r;
  const out = new Map(base);
  for (const { module, a, b } of adapter.modules.values()) {
    const name = `${module}.weight`;
    const w = base.get(name);
    if (w === undefined) {
      throw new InvalidAdapterError(
        "merge",
        `module ${module} has no ${name} in the base model to merge into`,
      );
    }
    const [rows, cols] = w.shape;
    if (w.shape.length !== 2 || b.shape[0] !== rows || a.shape[1] !== cols) {
      throw new InvalidAdapterError(
        "merge",
        `module ${module}: base weight [${w.shape.join(", ")}] does not fit lora_B @ lora_A ` +
          `[${b.shape[0]}, ${a.shape[1]}]`,
      );
    }
    const merged = new Float32Array(rows * cols);
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        let delta = 0;
        for (let k = 0; k < r; k++) delta += b.data[i * r + k] * a.data[k * cols + j];
        merged[i * cols + j] = w.data[i * cols + j] + scale * delta;
      }
    }
    out.set(name, namedTensor(name, w.shape, merged, w.dtype));
  }
  return out;
}
