/**
 * HF checkpoints and tokenizers: the public surface of adapters/hf (see README.md beside it).
 * @example
 * ```ts
 * import { loadHfModel } from "./mod.ts";
 *
 * const { config, tensors, tokenizer } = await loadHfModel("/models/Qwen2.5-0.5B-Instruct");
 * ```
 */
export * from "./errors.ts";
export {
  decodeFloats,
  encodeFloats,
  FLOAT_DTYPES,
  type FloatDtype,
  isFloatDtype,
  roundToDtype,
} from "./dtype.ts";
export { elementCount, type NamedTensor, namedTensor } from "./tensor.ts";
export {
  parseSafetensorsHeader,
  type SafetensorsEntry,
  type SafetensorsHeader,
} from "./safetensors-header.ts";
export { openSafetensors, type SafetensorsFile } from "./safetensors-reader.ts";
export {
  encodeSafetensors,
  type SafetensorsWriteOptions,
  writeSafetensors,
} from "./safetensors-writer.ts";
export {
  type CheckpointSource,
  INDEX_FILE,
  openCheckpoint,
  SINGLE_FILE,
  type TensorInfo,
} from "./checkpoint-reader.ts";
export {
  type CheckpointWriteOptions,
  DEFAULT_MAX_SHARD_BYTES,
  writeCheckpointTensors,
} from "./checkpoint-writer.ts";
export {
  type Architecture,
  type ModelConfig,
  modelConfigToJson,
  parseModelConfig,
  type RopeScaling,
  SUPPORTED_ARCHITECTURES,
} from "./model-config.ts";
export { ropeInverseFrequencies } from "./rope-frequencies.ts";
export {
  checkTensorShapes,
  type ExpectedTensor,
  expectedTensors,
  type TensorCheck,
} from "./expected-tensors.ts";
export {
  type ChatMessage,
  type ChatRenderOptions,
  type ChatTemplate,
  compileChatTemplate,
} from "./chat-template.ts";
export { type HfTokenizer, loadTokenizer } from "./tokenizer.ts";
export {
  EMBEDDED_CHAT_TEMPLATE,
  EMBEDDED_SPECIAL_TOKENS,
  EMBEDDED_TOKENIZER_DIR,
  EMBEDDED_VOCAB_SIZE,
  embeddedTokenizerFiles,
  writeEmbeddedTokenizer,
} from "./embedded-tokenizer.ts";
export { type HfModel, loadHfModel, type LoadOptions, readModelConfig } from "./load-model.ts";
export { saveHfModel, type SaveOptions, TOKENIZER_FILES } from "./save-model.ts";
export {
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  loadLoraAdapter,
  type LoraAdapter,
  type LoraConfig,
  type LoraModule,
  loraScale,
  parseLoraConfig,
  peftTensorName,
  saveLoraAdapter,
} from "./peft-adapter.ts";
export { mergeLoraAdapter } from "./merge-lora.ts";
