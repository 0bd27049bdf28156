/**
 * The frozen policy an evaluation samples from: a model's base weights uploaded once, plus, for a
 * run's LoRA checkpoint, the adapter's A/B matrices fed beside them (the same graph and inputs the
 * trainer generated with, so nothing is merged); a full-weights checkpoint replaces the base.
 * No train-step state is allocated: nothing here can update.
 */
import type { EventStore } from "../../events/mod.ts";
import { type HfModel, loadHfModel } from "../../adapters/hf/mod.ts";
import {
  allParams,
  createGenerator,
  decoderSpec,
  loadEmbeddedModel,
  loraParams,
  loraSpec,
  paramCount,
  trainableParams,
  uploadBase,
} from "../../adapters/model/mod.ts";
import { type Feed, hostTensor, type Runtime } from "../../adapters/onnx/runtime/mod.ts";
import { IO } from "../../adapters/onnx/train-step-spec.ts";
import { hashTensors } from "../trainer/policy-pool.ts";
import { decodeSafetensors } from "../trainer/safetensors-bytes.ts";
import type { SpeakingPolicy } from "../trainer/speaker.ts";
import { EvaluationInputError } from "./errors.ts";
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

async function loadBase(source: ModelSource): Promise<HfModel> {
  const model = source.model === "embedded"
    ? await loadEmbeddedModel()
    : await loadHfModel(source.model);
  if (!model.tokenizer) {
    throw new EvaluationInputError("--model", source.model, "has no tokenizer.json to prompt it");
  }
  return model;
}

/**
 * Loads `source` on `runtime` as worker group `id`; checkpoint blobs come from `store`.
 *
 * @example
 * ```ts
 * const loaded = await openEvalPolicy(runtime, store, source, "policy");
 * const speaker = createSpeaker(new Map([["policy", loaded.policy]]), agentToWg, settings);
 * ```
 */
export async function openEvalPolicy(
  runtime: Runtime,
  store: EventStore,
  source: ModelSource,
  id: string,
): Promise<EvalPolicy> {
  const model = await loadBase(source);
  const tokenizer = model.tokenizer!;
  const trained = source.kind === "run-checkpoint"
    ? decodeSafetensors(await store.blobs.get(source.blob), `checkpoint ${source.label}`)
    : null;
  const lora = source.kind === "run-checkpoint" && source.trainable.kind === "lora"
    ? loraSpec({
      rank: source.trainable.rank,
      alpha: source.trainable.alpha,
      targetModules: source.trainable.targets,
    })
    : null;
  const spec = decoderSpec(model.config, lora);
  const inSpecOrder = trained
    ? trainableParams(spec).map((p) => {
      const t = trained.get(p.name);
      if (!t || t.shape.join("x") !== p.shape.join("x")) {
        throw new EvaluationInputError(
          "--model",
          source.label,
          `checkpoint tensor ${p.name} is ${
            t ? `[${t.shape}]` : "missing"
          }; the run's model needs [${p.shape}]`,
        );
      }
      return t;
    })
    : [...model.tensors.values()];
  const parameterHash = hashTensors(inSpecOrder);
  if (source.kind === "run-checkpoint" && parameterHash !== source.parameterHash) {
    throw new EvaluationInputError(
      "--model",
      source.label,
      `the checkpoint's tensors hash to ${parameterHash}, its checkpoint.saved event says ` +
        source.parameterHash,
    );
  }
  // Full weights replace the base; an adapter rides on it.
  const base = uploadBase(
    runtime,
    spec,
    trained && !lora ? new Map(inSpecOrder.map((t) => [t.name, t])) : model.tensors,
  );
  const feeds: Record<string, Feed> = { ...base.feeds };
  for (const p of loraParams(spec)) {
    feeds[IO.param(p.name)] = hostTensor("float32", p.shape, trained!.get(p.name)!.data);
  }
  const generator = await createGenerator(runtime, spec);
  const policy: SpeakingPolicy = Object.freeze({
    id,
    spec,
    tokenizer,
    generate: (prompts, sampling) =>
      generator.generate(feeds, {
        prompts,
        maxTokens: sampling.maxTokens,
        temperature: sampling.temperature,
        choose: sampling.choose,
        stopTokenIds: tokenizer.eosTokenIds,
        padTokenId: tokenizer.padTokenId ?? 0,
      }),
  });
  return Object.freeze({
    policy,
    parameterCount: paramCount(allParams(spec)),
    trainedParameterCount: trained ? paramCount(trainableParams(spec)) : 0,
    parameterHash,
    release: async () => {
      await generator.release();
      base.release();
    },
  });
}
