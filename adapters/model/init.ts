/**
 * Deterministic initialization of a decoder and of LoRA adapters. Noise comes from a caller-given
 * `NormalFill` (the engine passes Philox keyed draws, one stream per parameter name), so the
 * model layer draws no randomness of its own.
 */
import { type LoraAdapter, type ModelConfig, type NamedTensor, namedTensor } from "../hf/mod.ts";
import { ModelError } from "./errors.ts";
import { loraAdapter, loraParamName } from "./lora.ts";
import type { ParamSpec } from "../onnx/train-step/mod.ts";
import { baseParams, type DecoderSpec } from "./parameters.ts";

/** Fills `out` with N(0, std^2) draws keyed by `purpose` (e.g. "init:model.norm.weight"). */
export type NormalFill = (purpose: string, out: Float32Array, std: number) => void;

/**
 * HF's initialization of the family: linear and embedding weights N(0, std^2) (config
 * `initializer_range`, default 0.02), biases 0, RMSNorm weights 1.
 *
 * @example
 * ```ts
 * import type { ModelConfig } from "../hf/mod.ts";
 * import { initBaseTensors, type NormalFill } from "./init.ts";
 *
 * declare const config: ModelConfig;
 * declare const normal: NormalFill; // keyed N(0, std^2) draws (engine/random's fillNormal)
 * const tensors = initBaseTensors(config, normal);
 * ```
 */
export function initBaseTensors(config: ModelConfig, normal: NormalFill): NamedTensor[] {
  return baseParams(config).map((p) => initBaseTensor(config, p, normal));
}

/**
 * One base parameter of `initBaseTensors`, the same values (each parameter has its own keyed
 * draws): for building a model too large to hold twice, one tensor at a time.
 *
 * @example
 * ```ts
 * import type { ModelConfig } from "../hf/mod.ts";
 * import { initBaseTensor, type NormalFill } from "./init.ts";
 * import { baseParams } from "./parameters.ts";
 *
 * declare const config: ModelConfig;
 * declare const fill: NormalFill;
 * const t = initBaseTensor(config, baseParams(config)[0], fill);
 * ```
 */
export function initBaseTensor(config: ModelConfig, p: ParamSpec, normal: NormalFill): NamedTensor {
  const range = config.raw.initializer_range;
  const std = typeof range === "number" && range > 0 ? range : 0.02;
  const data = new Float32Array(p.shape.reduce((a, b) => a * b, 1));
  if (p.name.endsWith("norm.weight")) data.fill(1);
  else if (!p.name.endsWith(".bias")) normal(`init:${p.name}`, data, std);
  return namedTensor(p.name, p.shape, data);
}

/**
 * A fresh adapter for `spec` with PEFT's "gaussian" initialization: A ~ N(0, 1/r^2), B = 0, so
 * the adapted model starts equal to the base.
 *
 * @example
 * ```ts
 * import { initLoraAdapter, type NormalFill } from "./init.ts";
 * import type { DecoderSpec } from "./parameters.ts";
 *
 * declare const spec: DecoderSpec; // with LoRA
 * declare const fill: NormalFill;
 * const adapter = initLoraAdapter(spec, fill, "solver");
 * ```
 */
export function initLoraAdapter(spec: DecoderSpec, normal: NormalFill, name = ""): LoraAdapter {
  const lora = spec.lora;
  if (lora === null) throw new ModelError("spec.lora", "is null; build the spec with a loraSpec");
  const r = lora.rank;
  return loraAdapter(spec.config, lora, (t) => {
    const a = new Float32Array(r * t.inFeatures);
    normal(`init-lora:${name}:${loraParamName(t.module, "A")}`, a, 1 / r);
    return { a, b: new Float32Array(t.outFeatures * r) };
  });
}
