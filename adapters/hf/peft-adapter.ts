/**
 * LoRA adapters in PEFT's on-disk format, so an adapter trained here loads with
 * `PeftModel.from_pretrained` and vice versa: `adapter_config.json` (peft_type LORA, r, lora_alpha,
 * target_modules, ...) and `adapter_model.safetensors` with tensors named
 * `base_model.model.<module>.lora_A.weight` ([r, in]) and `...lora_B.weight` ([out, r]).
 * The update to a module's weight W ([out, in]) is `scale * B @ A`, scale = alpha / r
 * (alpha / sqrt(r) with rsLoRA).
 *
 * What this follows in PEFT (huggingface/peft 5d602fdb):
 * - src/peft/utils/constants.py lines 400-401: the file names `adapter_model.safetensors` and
 *   `adapter_config.json`.
 * - src/peft/tuners/lora/layer.py lines 263-264: `lora_A = nn.Linear(in_features, r)` and
 *   `lora_B = nn.Linear(r, out_features)`, so lora_A.weight is [r, in] and lora_B.weight [out, r].
 * - src/peft/utils/save_and_load.py lines 93-283 (`get_peft_model_state_dict`): the saved keys are
 *   the PeftModel's state-dict keys with the adapter name removed (line 282), e.g.
 *   `base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight`: `base_model` is the
 *   LoraModel (src/peft/peft_model.py line 176), its `.model` the transformers model, whose own
 *   keys start `model.layers.N`.
 * - src/peft/peft_model.py lines 354-358: written with `safe_save_file(..., metadata={"format":
 *   "pt"})` (writeSafetensors always sets it); lines 374-381: `base_model_name_or_path` filled and
 *   `inference_mode` set true.
 * - src/peft/tuners/lora/config.py lines 613-642 and 992, src/peft/config.py lines 365-371: the
 *   config keys (peft_type LORA, r, lora_alpha, lora_dropout, target_modules, fan_in_fan_out,
 *   bias, use_rslora, task_type, base_model_name_or_path, revision, inference_mode).
 */
import { join } from "node:path";
import { readJsonFile } from "../../events/files/mod.ts";
import { exists } from "./file-exists.ts";
import type { FloatDtype } from "./dtype.ts";
import { InvalidAdapterError, MissingFileError } from "./errors.ts";
import { expectedTensors } from "./expected-tensors.ts";
import type { ModelConfig } from "./model-config.ts";
import { openSafetensors } from "./safetensors-reader.ts";
import { writeSafetensors } from "./safetensors-writer.ts";
import type { NamedTensor } from "./tensor.ts";

export const ADAPTER_CONFIG_FILE = "adapter_config.json";
export const ADAPTER_WEIGHTS_FILE = "adapter_model.safetensors";
/** The largest adapter_config.json read: PEFT writes about 1 KiB. */
const ADAPTER_CONFIG_MAX_BYTES = 1024 * 1024;

/** The adapter_config.json fields this project reads and writes. */
export interface LoraConfig {
  readonly r: number;
  readonly alpha: number;
  readonly dropout: number;
  /** Module-name suffixes PEFT matches, e.g. ["q_proj", "v_proj"]. */
  readonly targetModules: readonly string[];
  readonly useRslora: boolean;
  readonly baseModel: string | null;
  /** The base model's Hub revision (a commit), PEFT's `revision`; absent: null. */
  readonly baseRevision?: string | null;
}

/** One adapted module: `module` is the base parameter's name without `.weight`. */
export interface LoraModule {
  readonly module: string;
  /** [r, in_features] */
  readonly a: NamedTensor;
  /** [out_features, r] */
  readonly b: NamedTensor;
}

/** A LoRA adapter in memory. */
export interface LoraAdapter {
  readonly kind: "lora-adapter";
  readonly config: LoraConfig;
  /** Keyed by module name, e.g. "model.layers.0.self_attn.q_proj". */
  readonly modules: ReadonlyMap<string, LoraModule>;
}

/** `scale` multiplying B @ A: alpha / r, or alpha / sqrt(r) with rsLoRA. */
export function loraScale(c: LoraConfig): number {
  return c.useRslora ? c.alpha / Math.sqrt(c.r) : c.alpha / c.r;
}

/**
 * PEFT's tensor name for a module's A or B matrix.
 * @example
 * ```ts
 * import { peftTensorName } from "./peft-adapter.ts";
 *
 * peftTensorName("model.layers.0.self_attn.q_proj", "A");
 * // "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"
 * ```
 */
export function peftTensorName(module: string, which: "A" | "B"): string {
  return `base_model.model.${module}.lora_${which}.weight`;
}

const PEFT_NAME = /^base_model\.model\.(.+)\.lora_([AB])\.weight$/;

/**
 * Writes `adapter_config.json` and `adapter_model.safetensors` into `dir` (created if absent).
 * @example
 * ```ts
 * import { type LoraAdapter, saveLoraAdapter } from "./peft-adapter.ts";
 *
 * declare const dir: string;
 * declare const adapter: LoraAdapter;
 * await saveLoraAdapter(dir, adapter, { dtype: "F32" });
 * ```
 */
export async function saveLoraAdapter(
  dir: string,
  adapter: LoraAdapter,
  options: { dtype?: FloatDtype } = {},
): Promise<void> {
  checkAdapter(adapter, dir, null);
  await Deno.mkdir(dir, { recursive: true });
  const c = adapter.config;
  const config = {
    peft_type: "LORA",
    task_type: "CAUSAL_LM",
    base_model_name_or_path: c.baseModel,
    revision: c.baseRevision ?? null,
    r: c.r,
    lora_alpha: c.alpha,
    lora_dropout: c.dropout,
    target_modules: [...c.targetModules],
    use_rslora: c.useRslora,
    bias: "none",
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    modules_to_save: null,
    use_dora: false,
    rank_pattern: {},
    alpha_pattern: {},
  };
  await Deno.writeTextFile(join(dir, ADAPTER_CONFIG_FILE), JSON.stringify(config, null, 2) + "\n");
  const tensors: NamedTensor[] = [];
  for (const m of adapter.modules.values()) {
    tensors.push(renamed(m.a, peftTensorName(m.module, "A")));
    tensors.push(renamed(m.b, peftTensorName(m.module, "B")));
  }
  await writeSafetensors(join(dir, ADAPTER_WEIGHTS_FILE), tensors, { dtype: options.dtype });
}

/**
 * Reads a PEFT LoRA adapter directory. With `base`, each module must be a linear layer of that
 * model and A/B must fit its [out, in] shape.
 * @example
 * ```ts
 * import type { HfModel } from "./load-model.ts";
 * import { loadLoraAdapter } from "./peft-adapter.ts";
 *
 * declare const dir: string; // the adapter's folder
 * declare const model: HfModel; // its base model
 * const adapter = await loadLoraAdapter(dir, model.config);
 * ```
 */
export async function loadLoraAdapter(
  dir: string,
  base: ModelConfig | null = null,
): Promise<LoraAdapter> {
  // An adapter folder holds its own two files: a link in it may lead anywhere, so none is read.
  const configPath = join(dir, ADAPTER_CONFIG_FILE);
  let json: unknown;
  try {
    json = await readJsonFile(configPath, {
      maxBytes: ADAPTER_CONFIG_MAX_BYTES,
      symlinks: "refuse",
    });
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    throw new MissingFileError(
      configPath,
      "the PEFT LoRA config (peft_type, r, lora_alpha, target_modules)",
    );
  }
  const config = parseLoraConfig(json, configPath);
  const weightsPath = join(dir, ADAPTER_WEIGHTS_FILE);
  if (!(await exists(weightsPath))) {
    throw new MissingFileError(weightsPath, "the LoRA A/B matrices in safetensors format");
  }
  using file = await openSafetensors(weightsPath, { symlinks: "refuse" });
  const parts = new Map<string, { a?: NamedTensor; b?: NamedTensor }>();
  for (const name of file.names()) {
    const match = PEFT_NAME.exec(name);
    if (match === null) {
      throw new InvalidAdapterError(
        weightsPath,
        `tensor ${name} is not named base_model.model.<module>.lora_A|lora_B.weight`,
      );
    }
    const [, module, which] = match;
    const entry = parts.get(module) ?? {};
    const tensor = await file.read(name);
    if (which === "A") entry.a = renamed(tensor, `${module}.lora_A`);
    else entry.b = renamed(tensor, `${module}.lora_B`);
    parts.set(module, entry);
  }
  const modules = new Map<string, LoraModule>();
  for (const [module, { a, b }] of [...parts].sort(([x], [y]) => (x < y ? -1 : 1))) {
    if (a === undefined || b === undefined) {
      throw new InvalidAdapterError(
        weightsPath,
        `module ${module} lacks its lora_${a ? "B" : "A"} tensor`,
      );
    }
    modules.set(module, Object.freeze({ module, a, b }));
  }
  const adapter: LoraAdapter = Object.freeze({ kind: "lora-adapter", config, modules });
  checkAdapter(adapter, weightsPath, base);
  return adapter;
}

function renamed(t: NamedTensor, name: string): NamedTensor {
  return Object.freeze({ ...t, name });
}

/** Parses adapter_config.json, refusing PEFT options this project does not implement. */
export function parseLoraConfig(json: unknown, file = ADAPTER_CONFIG_FILE): LoraConfig {
  const raw = (json ?? {}) as Record<string, unknown>;
  const bad = (detail: string): never => {
    throw new InvalidAdapterError(file, detail);
  };
  if (raw.peft_type !== "LORA") {
    bad(`peft_type must be "LORA", got ${JSON.stringify(raw.peft_type)}`);
  }
  const r = raw.r;
  if (!Number.isSafeInteger(r) || (r as number) < 1) bad(`r must be a positive integer, got ${r}`);
  const alpha = raw.lora_alpha ?? 8;
  if (typeof alpha !== "number" || !(alpha > 0)) bad(`lora_alpha must be positive, got ${alpha}`);
  const targets = raw.target_modules;
  if (
    !Array.isArray(targets) || targets.length === 0 || !targets.every((t) => typeof t === "string")
  ) {
    bad(
      "target_modules must be a non-empty list of module names (regex strings are not supported)",
    );
  }
  const refuse = (field: string, ok: boolean) => {
    if (!ok) bad(`${field} = ${JSON.stringify(raw[field])} is not supported`);
  };
  const empty = (v: unknown) =>
    v === undefined || v === null || Object.keys(v as object).length === 0;
  refuse("use_dora", raw.use_dora !== true);
  refuse("fan_in_fan_out", raw.fan_in_fan_out !== true);
  refuse("bias", raw.bias === undefined || raw.bias === "none");
  refuse("rank_pattern", empty(raw.rank_pattern));
  refuse("alpha_pattern", empty(raw.alpha_pattern));
  refuse("modules_to_save", empty(raw.modules_to_save));
  refuse(
    "layers_to_transform",
    raw.layers_to_transform === undefined || raw.layers_to_transform === null,
  );
  const dropout = raw.lora_dropout ?? 0;
  if (typeof dropout !== "number" || dropout < 0 || dropout >= 1) {
    bad(`lora_dropout must be in [0, 1), got ${dropout}`);
  }
  return Object.freeze({
    r: r as number,
    alpha: alpha as number,
    dropout: dropout as number,
    targetModules: Object.freeze([...(targets as string[])]),
    useRslora: raw.use_rslora === true,
    baseModel: typeof raw.base_model_name_or_path === "string" ? raw.base_model_name_or_path : null,
  });
}

function checkAdapter(adapter: LoraAdapter, where: string, base: ModelConfig | null): void {
  const { r, targetModules } = adapter.config;
  const baseShapes = base === null
    ? null
    : new Map(expectedTensors(base).map((t) => [t.name, t.shape]));
  for (const { module, a, b } of adapter.modules.values()) {
    const targeted = targetModules.some((t) => module === t || module.endsWith(`.${t}`));
    if (!targeted) {
      throw new InvalidAdapterError(
        where,
        `module ${module} matches none of target_modules [${targetModules.join(", ")}]`,
      );
    }
    if (a.shape.length !== 2 || a.shape[0] !== r || b.shape.length !== 2 || b.shape[1] !== r) {
      throw new InvalidAdapterError(
        where,
        `module ${module}: lora_A [${a.shape.join(", ")}] must be [${r}, in] and lora_B [${
          b.shape.join(", ")
        }] must be [out, ${r}]`,
      );
    }
    if (baseShapes === null) continue;
    const w = baseShapes.get(`${module}.weight`);
    if (w === undefined || w.length !== 2) {
      throw new InvalidAdapterError(
        where,
        `module ${module} is not a linear layer of the ${base!.architecture} base`,
      );
    }
    if (a.shape[1] !== w[1] || b.shape[0] !== w[0]) {
      throw new InvalidAdapterError(
        where,
        `module ${module}: base weight is [${w.join(", ")}] but lora_B @ lora_A is [${
          b.shape[0]
        }, ${a.shape[1]}]`,
      );
    }
  }
}
