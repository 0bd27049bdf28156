/**
 * LoRA on a frozen base (Hu et al., 2021; PEFT's conventions): a targeted linear layer with weight
 * W [out, in] computes `x W^T + scale * (dropout(x) A^T) B^T`, A [r, in], B [out, r],
 * scale = alpha / r (alpha / sqrt(r) with rsLoRA). Dropout acts on the LoRA branch's input only,
 * as PEFT's `lora.layer.Linear.forward` does (`lora_B(lora_A(dropout(x))) * scaling`), and only
 * in the train step: rollout, evaluation and logprob graphs run the plain function, which is the
 * policy that sampled. Targets are module-name suffixes as in PEFT (`q_proj`, `v_proj`, ...).
 */
import { expectedTensors, type LoraAdapter, type ModelConfig, namedTensor } from "../hf/mod.ts";
import { ModelError } from "./errors.ts";

/** How a base is adapted. */
export interface LoraSpec {
  readonly kind: "lora-spec";
  readonly rank: number;
  readonly alpha: number;
  /** Module-name suffixes, e.g. ["q_proj", "v_proj"]. */
  readonly targetModules: readonly string[];
  readonly useRslora: boolean;
  /** Probability of dropping each element of a LoRA branch's input in training, in [0, 1). */
  readonly dropout: number;
}

/**
 * Validates and freezes a LoRA spec.
 *
 * @example
 * ```ts
 * import { loraSpec } from "./lora.ts";
 *
 * loraSpec({ rank: 8, alpha: 16, targetModules: ["q_proj", "v_proj"], dropout: 0.05 });
 * ```
 */
export function loraSpec(options: {
  rank: number;
  alpha: number;
  targetModules: readonly string[];
  useRslora?: boolean;
  /** Default 0 (no dropout). */
  dropout?: number;
}): LoraSpec {
  const { rank, alpha, targetModules } = options;
  const dropout = options.dropout ?? 0;
  if (!(dropout >= 0 && dropout < 1)) {
    throw new ModelError("lora.dropout", `must be in [0, 1), got ${dropout}`);
  }
  if (!Number.isSafeInteger(rank) || rank < 1) {
    throw new ModelError("lora.rank", `must be a positive integer, got ${rank}`);
  }
  if (!(alpha > 0) || !Number.isFinite(alpha)) {
    throw new ModelError("lora.alpha", `must be a positive number, got ${alpha}`);
  }
  if (targetModules.length === 0) {
    throw new ModelError("lora.targetModules", "name at least one module, e.g. q_proj");
  }
  return Object.freeze({
    kind: "lora-spec",
    rank,
    alpha,
    targetModules: Object.freeze([...targetModules]),
    useRslora: options.useRslora ?? false,
    dropout,
  });
}

/** The factor multiplying B A: alpha / r, or alpha / sqrt(r) with rsLoRA. */
export function loraScaling(spec: LoraSpec): number {
  return spec.useRslora ? spec.alpha / Math.sqrt(spec.rank) : spec.alpha / spec.rank;
}

/** One adapted linear layer: module name (HF, without `.weight`) and its [out, in] dims. */
export interface LoraTarget {
  readonly module: string;
  readonly outFeatures: number;
  readonly inFeatures: number;
}

/**
 * Every linear layer of the base that `spec` adapts, in parameter order. Throws when a target
 * suffix matches no linear layer (naming the ones that exist).
 *
 * @example
 * ```ts
 * import type { ModelConfig } from "../hf/mod.ts";
 * import { loraSpec, loraTargets } from "./lora.ts";
 *
 * declare const config: ModelConfig;
 * const spec = loraSpec({ rank: 8, alpha: 16, targetModules: ["q_proj"] });
 * loraTargets(config, spec).map((t) => t.module); // ["model.layers.0.self_attn.q_proj", ...]
 * ```
 */
export function loraTargets(config: ModelConfig, spec: LoraSpec): LoraTarget[] {
  const linears = expectedTensors(config).filter((t) =>
    t.name.endsWith("_proj.weight") && t.shape.length === 2
  );
  const suffixes = new Set(linears.map((t) => t.name.split(".").at(-2)!));
  for (const target of spec.targetModules) {
    if (!suffixes.has(target)) {
      throw new ModelError(
        "lora.targetModules",
        `${target} matches no linear layer of ${config.architecture}; known: ${[...suffixes]}`,
      );
    }
  }
  return linears
    .map((t) => ({ module: t.name.slice(0, -".weight".length), shape: t.shape }))
    .filter(({ module }) =>
      spec.targetModules.some((s) => module === s || module.endsWith(`.${s}`))
    )
    .map(({ module, shape }) =>
      Object.freeze({ module, outFeatures: shape[0], inFeatures: shape[1] })
    );
}

/** Parameter name of a module's A or B matrix (PEFT's name without `base_model.model.`). */
export function loraParamName(module: string, which: "A" | "B"): string {
  return `${module}.lora_${which}.weight`;
}

/**
 * An adapter for `spec` in adapters/hf's PEFT form, its A [r, in] and B [out, r] values given per
 * target by `values`.
 *
 * @example
 * ```ts
 * import type { ModelConfig } from "../hf/mod.ts";
 * import { loraAdapter, loraSpec } from "./lora.ts";
 *
 * declare const config: ModelConfig;
 * const spec = loraSpec({ rank: 8, alpha: 16, targetModules: ["q_proj"] });
 * const zeros = loraAdapter(config, spec, (t) => ({
 *   a: new Float32Array(spec.rank * t.inFeatures),
 *   b: new Float32Array(t.outFeatures * spec.rank),
 * }));
 * ```
 */
export function loraAdapter(
  config: ModelConfig,
  spec: LoraSpec,
  values: (target: LoraTarget) => { a: Float32Array; b: Float32Array },
  baseModel: string | null = null,
): LoraAdapter {
  const r = spec.rank;
  const modules = new Map(
    loraTargets(config, spec).map((t) => {
      const { a, b } = values(t);
      return [
        t.module,
        Object.freeze({
          module: t.module,
          a: namedTensor(`${t.module}.lora_A`, [r, t.inFeatures], a),
          b: namedTensor(`${t.module}.lora_B`, [t.outFeatures, r], b),
        }),
      ];
    }),
  );
  return Object.freeze({
    kind: "lora-adapter",
    config: Object.freeze({
      r,
      alpha: spec.alpha,
      dropout: spec.dropout,
      targetModules: spec.targetModules,
      useRslora: spec.useRslora,
      baseModel,
    }),
    modules,
  });
}
