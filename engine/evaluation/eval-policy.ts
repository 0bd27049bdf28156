/**
 * The frozen policy an evaluation samples from: a model's base weights uploaded once (shared by
 * the policies of one evaluation on the same base), plus, for a
 * run's LoRA checkpoint, the adapter's A/B matrices fed beside them (the same graph and inputs the
 * trainer generated with, so nothing is merged); a full-weights checkpoint replaces the base.
 * No train-step state is allocated: nothing here can update.
 */
import type { EventStore } from "../../events/mod.ts";
import type { HfModel, NamedTensor } from "../../adapters/hf/mod.ts";
import {
  allParams,
  type BaseWeights,
  createGenerator,
  type DecoderSpec,
  decoderSpec,
  loraParams,
  paramCount,
  trainableParams,
  uploadBase,
} from "../../adapters/model/mod.ts";
import { type Feed, hostTensor, type Runtime } from "../../adapters/onnx/runtime/mod.ts";
import { IO } from "../../adapters/onnx/train-step/mod.ts";
import { hashTensors, openBatchWith, type SpeakingPolicy } from "../trainer/rollout/mod.ts";
import { loadBaseModel } from "./base-model.ts";
import { checkpointSpec, checkpointTensors } from "./checkpoint-tensors.ts";
import type { ModelSource } from "./model-source.ts";

/** A loaded evaluation policy and what `policy.initialized` records about it. */
export interface EvalPolicy {
  readonly policy: SpeakingPolicy;
  readonly parameterCount: number;
  /** Parameters trained to make this model (the checkpoint's tensors); 0 for a plain model. */
  readonly trainedParameterCount: number;
  /** sha256 of the checkpoint's tensors (equal to its `checkpoint.saved`), else of the base's. */
  readonly parameterHash: string;
  release(): Promise<void>;
}

/**
 * Base models of one evaluation, each loaded and uploaded once however many of its worker groups
 * sit on it (as the training pool shares one base among its adapters).
 */
export interface SharedBases {
  /** The model named `model` (`embedded` or a directory), loaded on first use. */
  model(model: string, field: string, label: string): Promise<HfModel>;
  /** Its base weights on the device, uploaded on first use. */
  weights(model: string, spec: DecoderSpec, tensors: ReadonlyMap<string, NamedTensor>): BaseWeights;
  /** Frees every upload; policies fed from them must be released first. */
  release(): void;
}

/**
 * An empty cache of base models on `runtime`.
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../events/mod.ts";
 * import type { Runtime } from "../../adapters/onnx/runtime/mod.ts";
 * import type { ModelSource } from "./model-source.ts";
 * declare const runtime: Runtime;
 * declare const store: EventStore; // holds the checkpoints' blobs
 * declare const source: ModelSource; // from resolveModelSource
 * const bases = sharedBases(runtime);
 * const solver = await openEvalPolicy(runtime, store, source, "solver", { bases });
 * ```
 */
export function sharedBases(runtime: Runtime): SharedBases {
  const models = new Map<string, Promise<HfModel>>();
  const uploads = new Map<string, BaseWeights>();
  return {
    model: (model, field, label) => {
      if (!models.has(model)) models.set(model, loadBaseModel(model, field, label));
      return models.get(model)!;
    },
    weights: (model, spec, tensors) => {
      let base = uploads.get(model);
      if (!base) {
        base = uploadBase(runtime, spec, tensors);
        uploads.set(model, base);
      }
      return base;
    },
    release: () => {
      for (const base of uploads.values()) base.release();
      uploads.clear();
    },
  };
}

/**
 * Loads `source` on `runtime` as worker group `id`; checkpoint blobs come from `store`. `field`
 * names the argument the source came from in errors (default `--model`); `bases` shares base
 * models among the policies of one evaluation (default: a cache of this policy's own, released
 * with it).
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../events/mod.ts";
 * import type { Runtime } from "../../adapters/onnx/runtime/mod.ts";
 * import { createSpeaker } from "../trainer/rollout/mod.ts";
 * import type { ModelSource } from "./model-source.ts";
 * declare const runtime: Runtime;
 * declare const store: EventStore;
 * declare const source: ModelSource;
 * declare const agentToWg: Readonly<Record<string, string>>; // every role on "policy"
 * declare const settings: Parameters<typeof createSpeaker>[2]; // seed, sampling, batch size
 * const loaded = await openEvalPolicy(runtime, store, source, "policy");
 * const speaker = createSpeaker(new Map([["policy", loaded.policy]]), agentToWg, settings);
 * ```
 */
export async function openEvalPolicy(
  runtime: Runtime,
  store: EventStore,
  source: ModelSource,
  id: string,
  options: { field?: string; bases?: SharedBases } = {},
): Promise<EvalPolicy> {
  const field = options.field ?? "--model";
  const bases = options.bases ?? sharedBases(runtime);
  const model = await bases.model(source.model, field, source.label);
  const tokenizer = model.tokenizer!;
  const spec = source.kind === "run-checkpoint"
    ? checkpointSpec(model.config, source)
    : decoderSpec(model.config, null);
  const trained = source.kind === "run-checkpoint"
    ? await checkpointTensors(store, source, spec, field)
    : null;
  const parameterHash = source.kind === "run-checkpoint"
    ? source.parameterHash
    : hashTensors([...model.tensors.values()]);
  // Full weights replace the base (an upload of their own); an adapter rides on the shared base.
  const own = trained && !spec.lora
    ? uploadBase(runtime, spec, new Map(trained.map((t) => [t.name, t])))
    : null;
  const base = own ?? bases.weights(source.model, spec, model.tensors);
  const feeds: Record<string, Feed> = { ...base.feeds };
  const byName = new Map(trained?.map((t) => [t.name, t]));
  for (const p of loraParams(spec)) {
    feeds[IO.param(p.name)] = hostTensor("float32", p.shape, byName.get(p.name)!.data);
  }
  const generator = await createGenerator(runtime, spec);
  const policy: SpeakingPolicy = Object.freeze({
    id,
    spec,
    tokenizer,
    openBatch: openBatchWith(generator, tokenizer, () => feeds),
  });
  return Object.freeze({
    policy,
    parameterCount: paramCount(allParams(spec)),
    trainedParameterCount: trained ? paramCount(trainableParams(spec)) : 0,
    parameterHash,
    release: async () => {
      await generator.release();
      own?.release();
      if (!options.bases) bases.release();
    },
  });
}
