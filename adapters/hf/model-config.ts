/**
 * `config.json` of the Qwen2 / Qwen2.5 / Qwen3 / Llama 3 decoder family, parsed into the
 * hyperparameters the transformer builder needs. Unknown keys are kept in `raw` so a re-save
 * preserves them; options the builder cannot honour (sliding windows, non-SiLU activations, an
 * unknown rope scaling type) are refused here rather than silently ignored.
 */
import {
  InvalidConfigError,
  UnsupportedArchitectureError,
  UnsupportedConfigError,
} from "./errors.ts";

/** Architectures (the `architectures[0]` value) this loader accepts. */
export const SUPPORTED_ARCHITECTURES = Object.freeze(
  ["Qwen2ForCausalLM", "Qwen3ForCausalLM", "LlamaForCausalLM"] as const,
);
export type Architecture = (typeof SUPPORTED_ARCHITECTURES)[number];

/**
 * Upper bounds of the sizes a config.json may give: each far above any released model of these
 * families (the largest in brackets) and low enough that no size asks for an array JavaScript
 * cannot allocate. A value past its bound is refused naming the key and the limit.
 */
export const MODEL_CONFIG_LIMITS: Readonly<Record<string, number>> = Object.freeze({
  vocab_size: 2 ** 21, // [262,144]
  hidden_size: 2 ** 16, // [16,384]
  intermediate_size: 2 ** 18, // [53,248]
  num_hidden_layers: 1024, // [126]
  num_attention_heads: 1024, // [128]
  num_key_value_heads: 1024, // [128]
  head_dim: 4096, // [256]
  // Positions are float32 in the graph, exact integers up to 2^24 [10,485,760].
  max_position_embeddings: 2 ** 24,
  original_max_position_embeddings: 2 ** 24,
});

const MODEL_TYPE: Readonly<Record<Architecture, string>> = Object.freeze({
  Qwen2ForCausalLM: "qwen2",
  Qwen3ForCausalLM: "qwen3",
  LlamaForCausalLM: "llama",
});

/**
 * `rope_scaling` / `rope_parameters` as recorded. `linear` and `llama3` change the inverse
 * frequencies only (see rope-frequencies.ts); `dynamic` and `yarn` are recorded so a config loads,
 * but computing their frequencies is refused there.
 */
export type RopeScaling =
  | { readonly type: "linear"; readonly factor: number }
  | { readonly type: "dynamic"; readonly factor: number }
  | {
    readonly type: "llama3";
    readonly factor: number;
    readonly lowFreqFactor: number;
    readonly highFreqFactor: number;
    readonly originalMaxPositionEmbeddings: number;
  }
  | {
    readonly type: "yarn";
    readonly factor: number;
    readonly originalMaxPositionEmbeddings: number | null;
    readonly raw: Readonly<Record<string, unknown>>;
  };

/** The parsed, validated model hyperparameters. */
export interface ModelConfig {
  readonly kind: "model-config";
  readonly architecture: Architecture;
  readonly modelType: string;
  readonly vocabSize: number;
  readonly hiddenSize: number;
  readonly intermediateSize: number;
  readonly numLayers: number;
  readonly numHeads: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  readonly rmsNormEps: number;
  readonly ropeTheta: number;
  readonly ropeScaling: RopeScaling | null;
  readonly maxPositionEmbeddings: number;
  readonly tieWordEmbeddings: boolean;
  /** Bias on q/k/v projections (always on for Qwen2; `attention_bias` for Llama/Qwen3). */
  readonly qkvBias: boolean;
  /** Bias on the output projection (`attention_bias` for Llama/Qwen3; never for Qwen2). */
  readonly oBias: boolean;
  /** Bias on gate/up/down projections (Llama `mlp_bias`). */
  readonly mlpBias: boolean;
  /** Per-head RMSNorm on queries and keys (Qwen3). */
  readonly qkNorm: boolean;
  readonly bosTokenId: number | null;
  readonly eosTokenIds: readonly number[];
  /** `torch_dtype` (or newer `dtype`) as written, e.g. "bfloat16"; informational. */
  readonly torchDtype: string | null;
  /** The JSON object as read; `modelConfigToJson` starts from it. */
  readonly raw: Readonly<Record<string, unknown>>;
}

/**
 * Parses a config.json object. `file` only labels error messages.
 * @example
 * ```ts
 * import { parseModelConfig } from "./model-config.ts";
 *
 * declare const dir: string;
 * parseModelConfig(JSON.parse(await Deno.readTextFile(`${dir}/config.json`)));
 * ```
 */
export function parseModelConfig(json: unknown, file = "config.json"): ModelConfig {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new InvalidConfigError(file, "(root)", "must be a JSON object");
  }
  const raw = json as Record<string, unknown>;
  const f = fieldReader(raw, file);
  const architectures = raw.architectures;
  if (!Array.isArray(architectures) || typeof architectures[0] !== "string") {
    throw new InvalidConfigError(file, "architectures", "must be a list naming the model class");
  }
  const architecture = architectures[0];
  if (!(SUPPORTED_ARCHITECTURES as readonly string[]).includes(architecture)) {
    throw new UnsupportedArchitectureError(architecture, SUPPORTED_ARCHITECTURES);
  }
  const arch = architecture as Architecture;
  const hiddenSize = f.int("hidden_size");
  const numHeads = f.int("num_attention_heads");
  const numKvHeads = f.optionalInt("num_key_value_heads") ?? numHeads;
  if (numHeads % numKvHeads !== 0) {
    throw new InvalidConfigError(
      file,
      "num_key_value_heads",
      `= ${numKvHeads} must divide num_attention_heads = ${numHeads}`,
    );
  }
  const headDim = f.optionalInt("head_dim") ?? hiddenSize / numHeads;
  if (!Number.isInteger(headDim)) {
    throw new InvalidConfigError(
      file,
      "head_dim",
      `is absent and hidden_size ${hiddenSize} is not divisible by num_attention_heads ${numHeads}`,
    );
  }
  if (headDim % 2 !== 0) {
    throw new InvalidConfigError(
      file,
      "head_dim",
      `= ${headDim} must be even for rotary embedding`,
    );
  }
  const hiddenAct = raw.hidden_act ?? "silu";
  if (hiddenAct !== "silu") {
    throw new UnsupportedConfigError("hidden_act", hiddenAct, "only silu (SwiGLU MLP) is built");
  }
  const layerTypes = raw.layer_types;
  if (Array.isArray(layerTypes) && layerTypes.some((t) => t !== "full_attention")) {
    throw new UnsupportedConfigError(
      "layer_types",
      layerTypes,
      "only full_attention layers are built",
    );
  }
  if (raw.use_sliding_window === true) {
    throw new UnsupportedConfigError(
      "use_sliding_window",
      true,
      "sliding-window attention is not built; every layer uses full causal attention",
    );
  }
  const attentionBias = f.optionalBool("attention_bias") ?? false;
  const rope = ropeFields(raw, f);
  return Object.freeze({
    kind: "model-config",
    architecture: arch,
    modelType: typeof raw.model_type === "string" ? raw.model_type : MODEL_TYPE[arch],
    vocabSize: f.int("vocab_size"),
    hiddenSize,
    intermediateSize: f.int("intermediate_size"),
    numLayers: f.int("num_hidden_layers"),
    numHeads,
    numKvHeads,
    headDim,
    rmsNormEps: f.positive("rms_norm_eps"),
    ropeTheta: rope.theta,
    ropeScaling: rope.scaling,
    maxPositionEmbeddings: f.int("max_position_embeddings"),
    tieWordEmbeddings: f.optionalBool("tie_word_embeddings") ?? false,
    qkvBias: arch === "Qwen2ForCausalLM" ? true : attentionBias,
    oBias: arch === "Qwen2ForCausalLM" ? false : attentionBias,
    mlpBias: f.optionalBool("mlp_bias") ?? false,
    qkNorm: arch === "Qwen3ForCausalLM",
    bosTokenId: f.optionalInt("bos_token_id", 0),
    eosTokenIds: Object.freeze(f.intOrInts("eos_token_id")),
    torchDtype: typeof raw.torch_dtype === "string"
      ? raw.torch_dtype
      : typeof raw.dtype === "string"
      ? raw.dtype
      : null,
    raw: Object.freeze({ ...raw }),
  });
}

/**
 * Serializes a config back to HF's config.json keys, keeping unknown keys of `raw`.
 * @example
 * ```ts
 * import { type ModelConfig, modelConfigToJson } from "./model-config.ts";
 *
 * declare const dir: string;
 * declare const c: ModelConfig;
 * await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify(modelConfigToJson(c), null, 2));
 * ```
 */
export function modelConfigToJson(c: ModelConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {
    ...c.raw,
    architectures: [c.architecture],
    model_type: c.modelType,
    vocab_size: c.vocabSize,
    hidden_size: c.hiddenSize,
    intermediate_size: c.intermediateSize,
    num_hidden_layers: c.numLayers,
    num_attention_heads: c.numHeads,
    num_key_value_heads: c.numKvHeads,
    head_dim: c.headDim,
    hidden_act: "silu",
    rms_norm_eps: c.rmsNormEps,
    rope_theta: c.ropeTheta,
    rope_scaling: c.ropeScaling === null ? null : ropeScalingToJson(c.ropeScaling),
    max_position_embeddings: c.maxPositionEmbeddings,
    tie_word_embeddings: c.tieWordEmbeddings,
    bos_token_id: c.bosTokenId,
    eos_token_id: c.eosTokenIds.length === 1 ? c.eosTokenIds[0] : [...c.eosTokenIds],
  };
  // Newer transformers writes rope settings under rope_parameters; ours above supersede them.
  delete out.rope_parameters;
  if (c.architecture !== "Qwen2ForCausalLM") out.attention_bias = c.qkvBias;
  if (c.architecture === "LlamaForCausalLM") out.mlp_bias = c.mlpBias;
  if (c.torchDtype !== null && !("dtype" in c.raw)) out.torch_dtype = c.torchDtype;
  return out;
}

function ropeScalingToJson(s: RopeScaling): Record<string, unknown> {
  switch (s.type) {
    case "linear":
    case "dynamic":
      return { rope_type: s.type, factor: s.factor };
    case "llama3":
      return {
        rope_type: "llama3",
        factor: s.factor,
        low_freq_factor: s.lowFreqFactor,
        high_freq_factor: s.highFreqFactor,
        original_max_position_embeddings: s.originalMaxPositionEmbeddings,
      };
    case "yarn":
      return { ...s.raw, rope_type: "yarn", factor: s.factor };
  }
}

type FieldReader = ReturnType<typeof fieldReader>;

function fieldReader(raw: Record<string, unknown>, file: string) {
  const bad = (field: string, want: string): never => {
    throw new InvalidConfigError(file, field, `must be ${want}, got ${JSON.stringify(raw[field])}`);
  };
  const int = (field: string, min = 1): number => {
    const v = raw[field];
    if (!Number.isSafeInteger(v) || (v as number) < min) return bad(field, `an integer >= ${min}`);
    const max = MODEL_CONFIG_LIMITS[field];
    if (max !== undefined && (v as number) > max) return bad(field, `at most ${max}, its limit`);
    return v as number;
  };
  return {
    int,
    optionalInt: (field: string, min = 1): number | null =>
      raw[field] === undefined || raw[field] === null ? null : int(field, min),
    positive: (field: string): number => {
      const v = raw[field];
      return typeof v === "number" && v > 0 && Number.isFinite(v)
        ? v
        : bad(field, "a positive number");
    },
    optionalBool: (field: string): boolean | null => {
      const v = raw[field];
      if (v === undefined || v === null) return null;
      return typeof v === "boolean" ? v : bad(field, "true or false");
    },
    intOrInts: (field: string): number[] => {
      const v = raw[field];
      if (v === undefined || v === null) return [];
      const list = Array.isArray(v) ? v : [v];
      return list.every((x) => Number.isSafeInteger(x) && x >= 0)
        ? list as number[]
        : bad(field, "a token id or a list of token ids");
    },
    nested: (field: string) => {
      const v = raw[field];
      if (v === undefined || v === null) return null;
      if (typeof v !== "object" || Array.isArray(v)) bad(field, "an object");
      return fieldReader(v as Record<string, unknown>, `${file} ${field}`);
    },
    raw,
  };
}

function ropeFields(
  raw: Record<string, unknown>,
  f: FieldReader,
): { theta: number; scaling: RopeScaling | null } {
  // transformers >= 5 moves rope_theta and the scaling settings into rope_parameters.
  const params = f.nested("rope_parameters");
  const theta = params?.raw.rope_theta !== undefined
    ? params.positive("rope_theta")
    : raw.rope_theta !== undefined
    ? f.positive("rope_theta")
    : 10000;
  const scaling = params ?? f.nested("rope_scaling");
  if (scaling === null) return { theta, scaling: null };
  const type = scaling.raw.rope_type ?? scaling.raw.type ?? "default";
  switch (type) {
    case "default":
      return { theta, scaling: null };
    case "linear":
    case "dynamic":
      return {
        theta,
        scaling: Object.freeze({
          type: type === "linear" ? "linear" as const : "dynamic" as const,
          factor: scaling.positive("factor"),
        }),
      };
    case "llama3":
      return {
        theta,
        scaling: Object.freeze({
          type: "llama3",
          factor: scaling.positive("factor"),
          lowFreqFactor: scaling.positive("low_freq_factor"),
          highFreqFactor: scaling.positive("high_freq_factor"),
          originalMaxPositionEmbeddings: scaling.int("original_max_position_embeddings"),
        }),
      };
    case "yarn":
      return {
        theta,
        scaling: Object.freeze({
          type: "yarn",
          factor: scaling.positive("factor"),
          originalMaxPositionEmbeddings: scaling.optionalInt("original_max_position_embeddings"),
          raw: Object.freeze({ ...scaling.raw }),
        }),
      };
    default:
      throw new UnsupportedConfigError(
        "rope_scaling.rope_type",
        type,
        "known types are default, linear, dynamic, llama3, yarn",
      );
  }
}
