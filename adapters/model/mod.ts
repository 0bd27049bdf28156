/**
 * Policy models: the Qwen2 / Qwen3 / Llama decoder on the ONNX graph IR (decoder.ts reads top to
 * bottom), LoRA on a frozen shared base or full fine-tuning, KV-cache generation, the train-step
 * policy, and the embedded base model.
 *
 * @example
 * ```ts
 * import { type LoraAdapter, loadHfModel } from "../hf/mod.ts";
 * import type { Runtime } from "../onnx/runtime/mod.ts";
 * import { buildTrainStep } from "../onnx/train-step/mod.ts";
 * import * as model from "./mod.ts";
 *
 * declare const runtime: Runtime;
 * declare const adapter: LoraAdapter; // loadLoraAdapter(dir, hf.config)
 * declare const request: model.GenerationRequest; // prompts, maxTokens, temperature, choose
 * declare const prompt: number[];
 * declare const choose: (logits: Float32Array, index: number) => number;
 * const hf = await loadHfModel("/models/Qwen2.5-0.5B-Instruct");
 * const lora = model.loraSpec({ rank: 8, alpha: 16, targetModules: ["q_proj", "v_proj"] });
 * const spec = model.decoderSpec(hf.config, lora);
 * const base = model.uploadBase(runtime, spec, hf.tensors);
 * const gen = await model.createGenerator(runtime, spec);
 * const params = { ...base.feeds, ...model.adapterHostFeeds(spec, adapter) };
 * const rows = await gen.generate(params, request);
 * const batch = gen.openBatch(base.feeds, { stepping: "auto" }); // continuous batching (a server)
 * const row = await batch.submit({ prompt, maxTokens: 32, temperature: 1, choose }).result;
 * const step = buildTrainStep({ ...model.trainStepConfig(spec), kl: null }, "fused");
 * ```
 */
export { ModelError } from "./errors.ts";
export {
  decoder,
  type DecoderInputs,
  type DecoderMode,
  type DecoderOutputs,
  type KvPair,
} from "./decoder.ts";
export {
  loraAdapter,
  loraParamName,
  loraScaling,
  type LoraSpec,
  loraSpec,
  type LoraTarget,
  loraTargets,
} from "./lora.ts";
export {
  allParams,
  type BaseDtype,
  baseParams,
  type DecoderSpec,
  decoderSpec,
  type DecoderSpecOptions,
  FUSED_OPS,
  type FusedOp,
  fusedOpsMisfit,
  loraParams,
  paramCount,
  trainableParams,
  unknownFusedOps,
} from "./parameters.ts";
export {
  buildAppendDecodeGraph,
  buildCacheRowsGraph,
  buildCacheSpliceGraph,
  buildDecodeGraph,
  buildLogitsGraph,
  buildLogprobGraph,
  buildPrefillGraph,
  loraDropoutMasks,
  MODEL_IO,
  type ModelGraph,
  policyFn,
  trainStepConfig,
} from "./graphs.ts";
export { initBaseTensor, initBaseTensors, initLoraAdapter, type NormalFill } from "./init.ts";
export {
  adapterFromHost,
  adapterHostFeeds,
  baseHostFeeds,
  baseTensorsFromHost,
  type BaseWeights,
  type ParamFeeds,
  paramHostTensor,
  runnerFeeds,
  uploadBase,
} from "./weights.ts";
export {
  openSupervisedTrainer,
  supervisedBatch,
  type SupervisedExample,
  type SupervisedHyper,
  type SupervisedMetrics,
  type SupervisedTrainer,
} from "./supervised.ts";
export {
  createGenerator,
  type GenerationRequest,
  type Generator,
  type GeneratorOptions,
  type TokenChooser,
} from "./generate.ts";
export {
  type BatchOptions,
  type ContinuousBatch,
  type FinishReason,
  type GeneratedRow,
  type Sequence,
  type SequenceOutcome,
  type SequenceRequest,
  type StopStrings,
  tokenLogprob,
} from "./continuous-batch.ts";
export {
  EMBEDDED_MODEL_CONFIG_JSON,
  EMBEDDED_MODEL_DIR,
  EMBEDDED_SIZES,
  embeddedModelConfig,
  type EmbeddedSize,
  initEmbeddedModel,
  loadEmbeddedModel,
  saveEmbeddedModel,
} from "./embedded-model.ts";
export {
  ARCHIVED_EMBEDDED_MODEL_DIRS,
  currentEmbeddedVersion,
  type EmbeddedVersion,
  EmbeddedVersionError,
  recordedEmbeddedVersion,
  UNVERSIONED_EMBEDDED_SHA256,
  weightsSha256,
} from "./embedded-versions.ts";
