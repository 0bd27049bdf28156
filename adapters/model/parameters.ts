/**
 * What a decoder's parameters are: names (HF transformers' names, LoRA matrices beside their
 * module), shapes, which ones train, and exact counts.
 */
import { expectedTensors, type ModelConfig } from "../hf/mod.ts";
import { GQA_HEAD_SIZE_MULTIPLE } from "../onnx/mod.ts";
import type { ParamSpec } from "../onnx/train-step/mod.ts";
import { ModelError } from "./errors.ts";
import { loraParamName, type LoraSpec, loraTargets } from "./lora.ts";

/**
 * Element type the frozen base is stored and fed in. `float16` halves the base's memory; the
 * decoder casts each weight to float32 where it is used, so activations, LoRA matrices, gradients
 * and Adam state stay float32 (the weights themselves are rounded to half precision).
 */
export type BaseDtype = "float32" | "float16";

/**
 * Parts of the decoder and its train step that can be built as fewer onnxruntime nodes: fewer
 * kernels to dispatch on a GPU. A fused kernel sums in its own order, so its values differ from
 * the composed form's in the low bits, and graphs built with and without one do not replay each
 * other.
 * - `rms_norm`: onnxruntime's SimplifiedLayerNormalization (adapters/onnx's rmsNormalization), one
 *   node where the composed form has seven;
 * - `rotary_embedding`: onnxruntime's RotaryEmbedding (rotaryEmbedding), four nodes (the op, the
 *   reshapes to one sequence of tokens and back, and x's shape) where the composed form has eight;
 * - `attention`: onnxruntime's GroupQueryAttention (groupQueryAttention) in the decode step of
 *   the device KV cache (the webgpu backends'): the scores, mask, softmax, weighted values and the
 *   cache's concatenation in one node where the composed form has fourteen. Prefill stays composed
 *   (the native WebGPU kernel is wrong on prompts of 32 tokens or more), and so do the train step
 *   and the logprob graph (the op has no gradient) and the append decode of the cpu and wasm
 *   backends (whose cache the host keeps; the op grows the cache by a copy): on those two backends
 *   it changes nothing;
 * - `grad_norm`: the train step's global gradient norm as one reduction per stacked row group of
 *   the optimizer (three for LoRA) instead of one per tensor (TrainStepConfig.gradNorm
 *   "stacked"): about 1,000 nodes fewer in each of accumulate and apply at the 0.5B shape.
 */
export const FUSED_OPS = ["rms_norm", "rotary_embedding", "attention", "grad_norm"] as const;

/** One of FUSED_OPS. */
export type FusedOp = typeof FUSED_OPS[number];

/**
 * The names that are not FUSED_OPS, of a list a user or a config wrote.
 *
 * @example
 * ```ts
 * import { unknownFusedOps } from "./parameters.ts";
 *
 * unknownFusedOps("rms_norm,flash".split(",")); // ["flash"]
 * ```
 */
export function unknownFusedOps(names: readonly string[]): string[] {
  return names.filter((name) => !(FUSED_OPS as readonly string[]).includes(name));
}

/**
 * Why `fused` cannot be built for a model of `config`, as a sentence that says what to change, or
 * null when it can: a name that is not in FUSED_OPS, or attention for a head size that
 * GroupQueryAttention's kernels do not take. The CLIs check it against the model before anything
 * is recorded; decoderSpec throws it.
 *
 * @example
 * ```ts
 * import type { ModelConfig } from "../hf/mod.ts";
 * import { fusedOpsMisfit } from "./parameters.ts";
 *
 * declare const config: ModelConfig; // head_dim 4
 * fusedOpsMisfit(config, ["attention"]); // "attention needs a head_dim that is a multiple of 8 ..."
 * ```
 */
export function fusedOpsMisfit(config: ModelConfig, fused: readonly string[]): string | null {
  const unknown = unknownFusedOps(fused);
  if (unknown.length > 0) {
    return `${unknown.join(", ")} is not a fusable part; expected some of ${FUSED_OPS.join(", ")}`;
  }
  if (fused.includes("attention") && config.headDim % GQA_HEAD_SIZE_MULTIPLE !== 0) {
    return `attention needs a head_dim that is a multiple of ${GQA_HEAD_SIZE_MULTIPLE} ` +
      `(onnxruntime's GroupQueryAttention), and the model's is ${config.headDim}; leave attention out`;
  }
  return null;
}

/** A decoder to build: the base hyperparameters and an optional LoRA adaptation. */
export interface DecoderSpec {
  readonly kind: "decoder-spec";
  readonly config: ModelConfig;
  readonly lora: LoraSpec | null;
  readonly baseDtype: BaseDtype;
  /** What is built as one node (FUSED_OPS), in FUSED_OPS order. */
  readonly fused: readonly FusedOp[];
}

/** Options of `decoderSpec`. */
export interface DecoderSpecOptions {
  /** Default float32; float16 needs LoRA (a base that trains keeps float32). */
  readonly baseDtype?: BaseDtype;
  /** Parts built as one node each (FUSED_OPS); default none. */
  readonly fused?: readonly FusedOp[];
}

/**
 * @example
 * ```ts
 * import type { ModelConfig } from "../hf/mod.ts";
 * import { loraSpec } from "./lora.ts";
 * import { decoderSpec } from "./parameters.ts";
 *
 * declare const config: ModelConfig;
 * const lora = loraSpec({ rank: 4, alpha: 8, targetModules: ["q_proj"] });
 * decoderSpec(config, lora);
 * decoderSpec(config, lora, { baseDtype: "float16" }); // frozen base in half precision
 * ```
 */
export function decoderSpec(
  config: ModelConfig,
  lora: LoraSpec | null = null,
  options: DecoderSpecOptions = {},
): DecoderSpec {
  if (lora !== null) loraTargets(config, lora);
  const baseDtype = options.baseDtype ?? "float32";
  if (baseDtype !== "float32" && baseDtype !== "float16") {
    throw new ModelError("baseDtype", `is ${baseDtype}; use float32 or float16`);
  }
  if (baseDtype === "float16" && lora === null) {
    throw new ModelError(
      "baseDtype",
      "is float16 without LoRA; full fine-tuning trains the base, which stays float32",
    );
  }
  const fused = options.fused ?? [];
  const misfit = fusedOpsMisfit(config, fused);
  if (misfit !== null) throw new ModelError("fused", misfit);
  return Object.freeze({
    kind: "decoder-spec",
    config,
    lora,
    baseDtype,
    fused: Object.freeze(FUSED_OPS.filter((op) => fused.includes(op))),
  });
}

/**
 * The base model's parameters in HF order (a tied lm_head is not a parameter of its own).
 *
 * @example
 * ```ts
 * import type { ModelConfig } from "../hf/mod.ts";
 * import { baseParams } from "./parameters.ts";
 *
 * declare const config: ModelConfig;
 * baseParams(config)[0]; // { name: "model.embed_tokens.weight", shape: [V, d] }
 * ```
 */
export function baseParams(config: ModelConfig): ParamSpec[] {
  return expectedTensors(config)
    .filter((t) => !t.optional)
    .map((t) => Object.freeze({ name: t.name, shape: t.shape }));
}

/** The LoRA matrices of `spec` (A [r, in] then B [out, r] per target); [] without LoRA. */
export function loraParams(spec: DecoderSpec): ParamSpec[] {
  if (spec.lora === null) return [];
  const r = spec.lora.rank;
  return loraTargets(spec.config, spec.lora).flatMap((t) => [
    Object.freeze({ name: loraParamName(t.module, "A"), shape: Object.freeze([r, t.inFeatures]) }),
    Object.freeze({ name: loraParamName(t.module, "B"), shape: Object.freeze([t.outFeatures, r]) }),
  ]);
}

/** Every graph parameter: base (in the spec's base dtype) then LoRA (float32). */
export function allParams(spec: DecoderSpec): ParamSpec[] {
  const base = spec.baseDtype === "float16"
    ? baseParams(spec.config).map((p) => Object.freeze({ ...p, dtype: "float16" as const }))
    : baseParams(spec.config);
  return [...base, ...loraParams(spec)];
}

/**
 * The parameters that train: the LoRA matrices when the spec has LoRA (base frozen), else every
 * base parameter (full fine-tuning).
 *
 * @example
 * ```ts
 * import { type DecoderSpec, trainableParams } from "./parameters.ts";
 *
 * declare const spec: DecoderSpec; // with LoRA on q_proj
 * trainableParams(spec)[0].name; // "model.layers.0.self_attn.q_proj.lora_A.weight"
 * ```
 */
export function trainableParams(spec: DecoderSpec): ParamSpec[] {
  return spec.lora === null ? baseParams(spec.config) : loraParams(spec);
}

/**
 * Element count of a list of parameters.
 *
 * @example
 * ```ts
 * import { type DecoderSpec, paramCount, trainableParams } from "./parameters.ts";
 *
 * declare const spec: DecoderSpec;
 * paramCount(trainableParams(spec)); // what the run trains
 * ```
 */
export function paramCount(params: readonly ParamSpec[]): number {
  return params.reduce((n, p) => n + p.shape.reduce((a, b) => a * b, 1), 0);
}
