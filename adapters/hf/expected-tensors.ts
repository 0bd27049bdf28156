/**
 * The tensor names and shapes a config implies (HF transformers' parameter names for the
 * Qwen2/Qwen3/Llama decoder classes), and the check that a checkpoint matches them.
 */
import { MissingTensorError, ShapeMismatchError, UnexpectedTensorError } from "./errors.ts";
import type { ModelConfig } from "./model-config.ts";

/** One parameter the architecture has. `optional` marks a tied lm_head a file may still carry. */
export interface ExpectedTensor {
  readonly name: string;
  readonly shape: readonly number[];
  readonly optional: boolean;
}

/** Non-parameter buffers some older exports include; loading ignores them. */
const IGNORED_BUFFER = /\.rotary_emb\.inv_freq$/;

/**
 * Every parameter of the model in HF naming, layer by layer.
 * @example
 * ```ts
 * import { expectedTensors } from "./expected-tensors.ts";
 * import type { ModelConfig } from "./model-config.ts";
 *
 * declare const config: ModelConfig;
 * expectedTensors(config).map((t) => t.name); // ["model.embed_tokens.weight", ...]
 * ```
 */
export function expectedTensors(c: ModelConfig): ExpectedTensor[] {
  const out: ExpectedTensor[] = [];
  const add = (name: string, shape: number[], optional = false) =>
    out.push(Object.freeze({ name, shape: Object.freeze(shape), optional }));
  const q = c.numHeads * c.headDim;
  const kv = c.numKvHeads * c.headDim;
  const linear = (name: string, outDim: number, inDim: number, bias: boolean) => {
    add(`${name}.weight`, [outDim, inDim]);
    if (bias) add(`${name}.bias`, [outDim]);
  };
  add("model.embed_tokens.weight", [c.vocabSize, c.hiddenSize]);
  for (let i = 0; i < c.numLayers; i++) {
    const p = `model.layers.${i}`;
    add(`${p}.input_layernorm.weight`, [c.hiddenSize]);
    linear(`${p}.self_attn.q_proj`, q, c.hiddenSize, c.qkvBias);
    linear(`${p}.self_attn.k_proj`, kv, c.hiddenSize, c.qkvBias);
    linear(`${p}.self_attn.v_proj`, kv, c.hiddenSize, c.qkvBias);
    linear(`${p}.self_attn.o_proj`, c.hiddenSize, q, c.oBias);
    if (c.qkNorm) {
      add(`${p}.self_attn.q_norm.weight`, [c.headDim]);
      add(`${p}.self_attn.k_norm.weight`, [c.headDim]);
    }
    add(`${p}.post_attention_layernorm.weight`, [c.hiddenSize]);
    linear(`${p}.mlp.gate_proj`, c.intermediateSize, c.hiddenSize, c.mlpBias);
    linear(`${p}.mlp.up_proj`, c.intermediateSize, c.hiddenSize, c.mlpBias);
    linear(`${p}.mlp.down_proj`, c.hiddenSize, c.intermediateSize, c.mlpBias);
  }
  add("model.norm.weight", [c.hiddenSize]);
  add("lm_head.weight", [c.vocabSize, c.hiddenSize], c.tieWordEmbeddings);
  return out;
}

/** Result of `checkTensorShapes`: names ignored as known non-parameter buffers. */
export interface TensorCheck {
  readonly ignored: readonly string[];
}

/**
 * Checks `shapes` (name -> shape) against the config: throws MissingTensorError,
 * ShapeMismatchError or UnexpectedTensorError naming the first offending tensor.
 * `where` labels the checkpoint in messages.
 * @example
 * ```ts
 * import type { TensorInfo } from "./checkpoint-reader.ts";
 * import { checkTensorShapes } from "./expected-tensors.ts";
 * import type { ModelConfig } from "./model-config.ts";
 *
 * declare const config: ModelConfig;
 * declare const infos: readonly TensorInfo[]; // a checkpoint's tensors
 * declare const dir: string;
 * checkTensorShapes(config, new Map(infos.map((t) => [t.name, t.shape])), dir);
 * ```
 */
export function checkTensorShapes(
  c: ModelConfig,
  shapes: ReadonlyMap<string, readonly number[]>,
  where: string,
): TensorCheck {
  const expected = expectedTensors(c);
  const known = new Set(expected.map((t) => t.name));
  for (const t of expected) {
    const actual = shapes.get(t.name);
    if (actual === undefined) {
      if (t.optional) continue;
      throw new MissingTensorError(t.name, where);
    }
    if (actual.length !== t.shape.length || actual.some((d, i) => d !== t.shape[i])) {
      throw new ShapeMismatchError(t.name, t.shape, actual);
    }
  }
  const ignored: string[] = [];
  for (const name of [...shapes.keys()].sort()) {
    if (known.has(name)) continue;
    if (!IGNORED_BUFFER.test(name)) throw new UnexpectedTensorError(name, where);
    ignored.push(name);
  }
  return Object.freeze({ ignored: Object.freeze(ignored) });
}
