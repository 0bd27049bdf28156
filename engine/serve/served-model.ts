/**
 * The model a server serves: one base (a local HF checkpoint or the embedded model) uploaded once
 * to the runtime's device, and LoRA adapters loaded and unloaded at run time on top of it. Each
 * adapter shape (rank, alpha, targets) gets its own compiled generator, shared by the adapters of
 * that shape; an adapter's A/B matrices are uploaded once and fed beside the base (nothing is
 * merged: the same graph and inputs as the trainer's rollouts). An unloaded adapter's memory is
 * freed once the sequences running on it end.
 */
import { basename } from "node:path";
import { FileReadError } from "../../events/files/mod.ts";
import {
  HfError,
  type HfModel,
  type HfTokenizer,
  loadHfModel,
  loadLoraAdapter,
  type ModelConfig,
} from "../../adapters/hf/mod.ts";
import {
  adapterHostFeeds,
  type BaseWeights,
  buildLogitsGraph,
  createGenerator,
  type DecoderSpec,
  decoderSpec,
  type FusedOp,
  type Generator,
  loadEmbeddedModel,
  loraSpec,
  MODEL_IO,
  ModelError,
  uploadBase,
} from "../../adapters/model/mod.ts";
import {
  type DeviceTensor,
  hostTensor,
  type Runtime,
  type Session,
} from "../../adapters/onnx/runtime/mod.ts";
import { ApiError } from "./api-error.ts";
import { allowedAdapterFolder } from "./adapter-path.ts";
import type { HeldWeights } from "./continuous-scheduler.ts";

/** Limits on adapters, as vLLM's `--max-loras N --max-lora-rank R`. */
export interface AdapterLimits {
  /** Folders adapters may be loaded from (`--lora-dir`); none: loading by path is refused. */
  readonly loraDirs: readonly string[];
  readonly maxLoras: number;
  readonly maxLoraRank: number;
}

/** A loaded adapter, as `/v1/models` lists it. */
export interface AdapterCard {
  readonly name: string;
  readonly path: string;
  readonly rank: number;
  readonly created: number;
}

interface Loaded {
  /** Unique per load (the scheduler's batch key). */
  readonly key: string;
  readonly card: AdapterCard;
  readonly spec: DecoderSpec;
  readonly lora: Readonly<Record<string, DeviceTensor>>;
  holds: number;
  unloaded: boolean;
}

/** The served base and its adapters. */
export interface ServedModel {
  /** The base's name in requests and `/v1/models` (`--served-model-name`, default `--model`). */
  readonly name: string;
  readonly root: string;
  readonly config: ModelConfig;
  readonly tokenizer: HfTokenizer;
  readonly created: number;
  readonly limits: AdapterLimits;
  /**
   * "" for the base's name, the adapter's name for a loaded adapter (as vLLM) or `base:adapter`
   * (as SGLang); ApiError 404 otherwise.
   */
  weightsOf(model: string | undefined): string;
  hold(weights: string): HeldWeights;
  adapters(): AdapterCard[];
  loadAdapter(name: string, path: string): Promise<AdapterCard>;
  unloadAdapter(name: string): void;
  /**
   * Logits of every position of `tokens` on `weights` ([tokens.length * vocab], row i predicts
   * token i + 1), for the prompt logprobs of `echo`.
   */
  promptLogits(weights: string, tokens: readonly number[]): Promise<Float32Array>;
  close(): Promise<void>;
}

/** A model could not be loaded for serving; the message names the path and the fix. */
export class ServeModelError extends Error {
  override name = "ServeModelError";
}

async function loadBase(model: string): Promise<HfModel> {
  const loaded = model === "embedded" ? await loadEmbeddedModel() : await loadHfModel(model);
  if (loaded.tokenizer === null) {
    throw new ServeModelError(`model ${model} has no tokenizer.json; the server needs one`);
  }
  return loaded;
}

function specKey(spec: DecoderSpec): string {
  const l = spec.lora;
  return l === null
    ? "base"
    : JSON.stringify([l.rank, l.alpha, l.useRslora, [...l.targetModules].sort()]);
}

/**
 * Loads `model` ("embedded" or an HF directory) on `runtime` and compiles the base generator;
 * `fused` names the decoder parts its graphs and its adapters' build as one node each (a run's
 * runtime.fused_ops).
 *
 * @example
 * ```ts
 * import { openServeRuntime } from "./runtime-choice.ts";
 * import { openServedModel } from "./served-model.ts";
 *
 * const runtime = await openServeRuntime("cpu", 1);
 * const limits = { loraDirs: [], maxLoras: 8, maxLoraRank: 64 };
 * const served = await openServedModel(runtime, "embedded", limits);
 * ```
 */
export async function openServedModel(
  runtime: Runtime,
  model: string,
  limits: AdapterLimits,
  servedName: string = model,
  fused: readonly FusedOp[] = [],
): Promise<ServedModel> {
  const hf = await loadBase(model);
  const tokenizer = hf.tokenizer!;
  const baseSpec = decoderSpec(hf.config, null, { fused });
  const base: BaseWeights = uploadBase(runtime, baseSpec, hf.tensors);
  const generators = new Map<string, Promise<Generator>>();
  const scorers = new Map<string, Promise<Session>>();
  const compiled = <T>(
    cache: Map<string, Promise<T>>,
    spec: DecoderSpec,
    make: () => Promise<T>,
  ) => {
    const key = specKey(spec);
    if (!cache.has(key)) cache.set(key, make());
    return cache.get(key)!;
  };
  const generatorFor = (spec: DecoderSpec) =>
    compiled(generators, spec, () => createGenerator(runtime, spec));
  const baseGenerator = await generatorFor(baseSpec);
  // Compiled generators by spec key, for `hold`, which must not wait.
  const ready = new Map<string, Generator>([[specKey(baseSpec), baseGenerator]]);
  const loaded = new Map<string, Loaded>();
  const loading = new Set<string>();
  let loads = 0;
  const created = Math.floor(Date.now() / 1000);

  const dispose = (entry: Loaded) => Object.values(entry.lora).forEach((t) => t.dispose());
  const entryOf = (weights: string): Loaded => {
    const entry = loaded.get(weights);
    if (!entry) {
      throw new ApiError(404, `the adapter ${weights} is not loaded (it was unloaded)`, "model");
    }
    return entry;
  };

  const hold = (weights: string): HeldWeights => {
    if (weights === "") {
      return { key: "", generator: baseGenerator, feeds: base.feeds, release: () => {} };
    }
    const entry = entryOf(weights);
    entry.holds++;
    return {
      key: entry.key,
      generator: ready.get(specKey(entry.spec))!,
      feeds: { ...base.feeds, ...entry.lora },
      release: () => {
        entry.holds--;
        if (entry.unloaded && entry.holds === 0) dispose(entry);
      },
    };
  };

  return {
    name: servedName,
    root: model,
    config: hf.config,
    tokenizer,
    created,
    limits,
    weightsOf(requested) {
      if (requested === undefined || requested === servedName) return "";
      if (loaded.has(requested)) return requested;
      // SGLang's OpenAI API also names an adapter as `base:adapter`.
      const adapter = requested.startsWith(`${servedName}:`)
        ? requested.slice(servedName.length + 1)
        : null;
      if (adapter !== null && loaded.has(adapter)) return adapter;
      const known = [servedName, ...loaded.keys()].map((n) => JSON.stringify(n)).join(", ");
      throw new ApiError(
        404,
        `the model ${JSON.stringify(requested)} does not exist; this server has ${known} ` +
          "(load an adapter with POST /v1/load_lora_adapter)",
        "model",
        "model_not_found",
      );
    },
    hold,
    adapters: () => [...loaded.values()].map((e) => e.card),
    async loadAdapter(name, path) {
      if (name === servedName) {
        throw new ApiError(
          400,
          `lora_name ${name} is the base model's name; pick another`,
          "lora_name",
        );
      }
      // vLLM refuses a name already loaded with 400 (vllm/entrypoints/openai/models/serving.py at
      // 00153c8b, `_check_load_lora_adapter_request`).
      if (loaded.has(name) || loading.has(name)) {
        throw new ApiError(
          400,
          `the adapter ${name} has already been loaded; unload it first or pick another name`,
          "lora_name",
        );
      }
      if (loaded.size + loading.size >= limits.maxLoras) {
        throw new ApiError(
          400,
          `${loaded.size} adapters are loaded, the most this server holds (--max-loras ` +
            `${limits.maxLoras}); unload one first`,
          "lora_name",
        );
      }
      loading.add(name);
      try {
        const folder = await allowedAdapterFolder(path, limits.loraDirs);
        const adapter = await readAdapter(folder, hf.config);
        const c = adapter.config;
        if (c.r > limits.maxLoraRank) {
          throw new ApiError(
            400,
            `the adapter's rank ${c.r} exceeds --max-lora-rank ${limits.maxLoraRank}`,
            "lora_path",
          );
        }
        let spec: DecoderSpec;
        let lora: Record<string, DeviceTensor>;
        try {
          spec = decoderSpec(
            hf.config,
            loraSpec({
              rank: c.r,
              alpha: c.alpha,
              targetModules: c.targetModules,
              useRslora: c.useRslora,
            }),
            { fused },
          );
          lora = Object.fromEntries(
            Object.entries(adapterHostFeeds(spec, adapter)).map(([k, t]) => [k, runtime.upload(t)]),
          );
        } catch (err) {
          if (err instanceof ModelError) {
            throw new ApiError(
              400,
              `the adapter in ${path} does not fit the base ${servedName}: ${err.message}`,
              "lora_path",
            );
          }
          throw err;
        }
        ready.set(specKey(spec), await generatorFor(spec));
        const card = { name, path, rank: c.r, created: Math.floor(Date.now() / 1000) };
        loads++;
        loaded.set(name, { key: `${name}#${loads}`, card, spec, lora, holds: 0, unloaded: false });
        return card;
      } finally {
        loading.delete(name);
      }
    },
    unloadAdapter(name) {
      const entry = loaded.get(name);
      // vLLM answers 404 for an adapter it does not hold (models/serving.py at 00153c8b,
      // `_check_unload_lora_adapter_request`).
      if (!entry) {
        throw new ApiError(404, `the lora adapter ${name} cannot be found`, "lora_name");
      }
      loaded.delete(name);
      entry.unloaded = true;
      if (entry.holds === 0) dispose(entry);
    },
    async promptLogits(weights, tokens) {
      const held = hold(weights);
      try {
        const spec = weights === "" ? baseSpec : entryOf(weights).spec;
        const session = await compiled(
          scorers,
          spec,
          async () => await runtime.load(buildLogitsGraph(spec).model),
        );
        const out = await session.run({
          ...held.feeds,
          [MODEL_IO.tokens]: hostTensor("int32", [1, tokens.length], Int32Array.from(tokens)),
          [MODEL_IO.attentionMask]: hostTensor(
            "float32",
            [1, tokens.length],
            new Float32Array(tokens.length).fill(1),
          ),
        });
        return out.host[MODEL_IO.logits].data as Float32Array;
      } finally {
        held.release();
      }
    },
    async close() {
      for (const entry of loaded.values()) dispose(entry);
      loaded.clear();
      for (const g of generators.values()) await (await g).release();
      for (const s of scorers.values()) await (await s).release();
      base.release();
    },
  };
}

/**
 * Reads a PEFT folder against the base, turning the reader's errors (a file that is not an
 * adapter's, or not a regular file within its limit) into a 400 naming it.
 */
async function readAdapter(folder: string, config: ModelConfig) {
  try {
    return await loadLoraAdapter(folder, config);
  } catch (err) {
    if (err instanceof HfError || err instanceof FileReadError) {
      throw new ApiError(
        400,
        `${basename(folder)} is not a PEFT LoRA adapter of this base: ${err.message}`,
        "lora_path",
      );
    }
    throw err;
  }
}
