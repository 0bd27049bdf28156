/**
 * Model weights as runtime feeds. A base is uploaded to the runtime's device once and its device
 * tensors are fed to every session and every adapter (one copy in memory however many agents
 * share it); LoRA matrices are small host tensors per agent (or device state while training).
 */
import { type LoraAdapter, type NamedTensor, namedTensor } from "../hf/mod.ts";
import {
  type DeviceTensor,
  type Feed,
  type HostTensor,
  hostTensor,
  type Runtime,
} from "../onnx/runtime/mod.ts";
import { IO, type ParamSpec, type TrainStepRunner } from "../onnx/train-step/mod.ts";
import { ModelError } from "./errors.ts";
import { loraAdapter, loraParamName } from "./lora.ts";
import { allParams, baseParams, type DecoderSpec, loraParams } from "./parameters.ts";

/** Graph feeds keyed by input name (`param:<HF name>`). */
export type ParamFeeds = Readonly<Record<string, Feed>>;

/** A base model's parameters resident on one runtime's device. */
export interface BaseWeights {
  readonly kind: "base-weights";
  /** By graph input name (`param:<HF name>`), for the model graphs. */
  readonly feeds: Readonly<Record<string, DeviceTensor>>;
  /** The same tensors by HF name, as `openTrainStep({ frozen })` takes them. */
  readonly tensors: Readonly<Record<string, DeviceTensor>>;
  /** Frees the device copies; sessions must not be fed them afterwards. */
  release(): void;
}

function checked(params: readonly ParamSpec[], tensors: ReadonlyMap<string, NamedTensor>) {
  return params.map((p) => {
    const t = tensors.get(p.name);
    if (t === undefined) throw new ModelError(p.name, "is missing from the weights given");
    if (t.shape.length !== p.shape.length || t.shape.some((d, i) => d !== p.shape[i])) {
      throw new ModelError(p.name, `has shape [${t.shape}], the config needs [${p.shape}]`);
    }
    return { name: p.name, tensor: paramHostTensor(p, t.data) };
  });
}

/**
 * A parameter's values as the host tensor its graph input takes: float32 as given, or float16
 * (rounded to nearest even) when the spec says so.
 *
 * @example
 * ```ts
 * import type { Runtime } from "../onnx/runtime/mod.ts";
 * import { paramHostTensor } from "./weights.ts";
 *
 * declare const runtime: Runtime;
 * declare const values: Float32Array; // 64 x 128 values
 * const name = "model.embed_tokens.weight";
 * runtime.upload(paramHostTensor({ name, shape: [64, 128], dtype: "float16" }, values));
 * ```
 */
export function paramHostTensor(p: ParamSpec, values: Float32Array): HostTensor {
  return p.dtype === "float16"
    ? hostTensor("float16", p.shape, new Uint16Array(Float16Array.from(values).buffer))
    : hostTensor("float32", p.shape, values);
}

/** The base parameters as the spec feeds them (float16 when its base is). */
function specBaseParams(spec: DecoderSpec): ParamSpec[] {
  return allParams(spec).slice(0, baseParams(spec.config).length);
}

/**
 * Host tensors of the base parameters, keyed by graph input name (float16, rounded to nearest
 * even, when the spec's base is).
 *
 * @example
 * ```ts
 * import type { HfModel } from "../hf/mod.ts";
 * import type { DeviceState } from "../onnx/runtime/mod.ts";
 * import { IO } from "../onnx/train-step/mod.ts";
 * import type { DecoderSpec } from "./parameters.ts";
 * import { baseHostFeeds } from "./weights.ts";
 *
 * declare const spec: DecoderSpec;
 * declare const model: HfModel;
 * declare const state: DeviceState;
 * const name = "model.norm.weight";
 * state.write(IO.param(name), baseHostFeeds(spec, model.tensors)[IO.param(name)]);
 * ```
 */
export function baseHostFeeds(
  spec: DecoderSpec,
  tensors: ReadonlyMap<string, NamedTensor>,
): Record<string, HostTensor> {
  return Object.fromEntries(
    checked(specBaseParams(spec), tensors).map((t) => [IO.param(t.name), t.tensor]),
  );
}

/**
 * Uploads a base once (e.g. `loadHfModel(dir).tensors`); every session and adapter feeds these.
 * A float16 spec uploads half-precision copies (half the device memory).
 *
 * @example
 * ```ts
 * import type { HfModel } from "../hf/mod.ts";
 * import type { Runtime } from "../onnx/runtime/mod.ts";
 * import type { DecoderSpec } from "./parameters.ts";
 * import { uploadBase } from "./weights.ts";
 *
 * declare const runtime: Runtime;
 * declare const spec: DecoderSpec;
 * declare const model: HfModel;
 * const base = uploadBase(runtime, spec, model.tensors);
 * ```
 */
export function uploadBase(
  runtime: Runtime,
  spec: DecoderSpec,
  tensors: ReadonlyMap<string, NamedTensor>,
): BaseWeights {
  const feeds: Record<string, DeviceTensor> = {};
  const byName: Record<string, DeviceTensor> = {};
  for (const t of checked(specBaseParams(spec), tensors)) {
    byName[t.name] = feeds[IO.param(t.name)] = runtime.upload(t.tensor);
  }
  return Object.freeze({
    kind: "base-weights",
    feeds: Object.freeze(feeds),
    tensors: Object.freeze(byName),
    release: () => Object.values(feeds).forEach((t) => t.dispose()),
  });
}

/**
 * Host tensors of an adapter's LoRA matrices, keyed by graph input name, checked against the
 * spec's targets and rank.
 *
 * @example
 * ```ts
 * import type { LoraAdapter } from "../hf/mod.ts";
 * import type { HostTensor, Session } from "../onnx/runtime/mod.ts";
 * import type { DecoderSpec } from "./parameters.ts";
 * import { adapterHostFeeds, type BaseWeights } from "./weights.ts";
 *
 * declare const spec: DecoderSpec;
 * declare const session: Session; // e.g. buildLogprobGraph(spec), loaded
 * declare const base: BaseWeights;
 * declare const adapter: LoraAdapter;
 * declare const batch: Record<string, HostTensor>; // tokens, targets, attention mask
 * await session.run({ ...base.feeds, ...adapterHostFeeds(spec, adapter), ...batch });
 * ```
 */
export function adapterHostFeeds(
  spec: DecoderSpec,
  adapter: LoraAdapter,
): Record<string, HostTensor> {
  const tensors = new Map<string, NamedTensor>();
  for (const m of adapter.modules.values()) {
    tensors.set(loraParamName(m.module, "A"), m.a);
    tensors.set(loraParamName(m.module, "B"), m.b);
  }
  const expected = loraParams(spec);
  if (expected.length !== tensors.size) {
    throw new ModelError(
      "adapter",
      `has ${tensors.size / 2} modules, the spec targets ${expected.length / 2}`,
    );
  }
  return Object.fromEntries(checked(expected, tensors).map((t) => [IO.param(t.name), t.tensor]));
}

function hostData(host: Readonly<Record<string, HostTensor>>, p: ParamSpec): Float32Array {
  const t = host[IO.param(p.name)];
  if (t === undefined || t.dtype !== "float32") {
    throw new ModelError(IO.param(p.name), "is missing or not float32 in the tensors given");
  }
  return Float32Array.from(t.data as Float32Array);
}

/**
 * Base parameters read back from the device (e.g. after full fine-tuning) as HF tensors, ready for
 * `saveHfModel`.
 *
 * @example
 * ```ts
 * import { saveHfModel } from "../hf/mod.ts";
 * import type { HostTensor } from "../onnx/runtime/mod.ts";
 * import type { DecoderSpec } from "./parameters.ts";
 * import { baseTensorsFromHost } from "./weights.ts";
 *
 * declare const spec: DecoderSpec; // full fine-tuning
 * declare const trained: Record<string, HostTensor>; // by IO.param(name), from runner.readParam
 * await saveHfModel("/tmp/trained", spec.config, baseTensorsFromHost(spec, trained));
 * ```
 */
export function baseTensorsFromHost(
  spec: DecoderSpec,
  host: Readonly<Record<string, HostTensor>>,
): NamedTensor[] {
  return baseParams(spec.config).map((p) => namedTensor(p.name, p.shape, hostData(host, p)));
}

/**
 * A trained adapter read back from the device, as the PEFT adapter `saveLoraAdapter` writes.
 *
 * @example
 * ```ts
 * import { saveLoraAdapter } from "../hf/mod.ts";
 * import type { HostTensor } from "../onnx/runtime/mod.ts";
 * import type { DecoderSpec } from "./parameters.ts";
 * import { adapterFromHost } from "./weights.ts";
 *
 * declare const spec: DecoderSpec; // with LoRA
 * declare const trained: Record<string, HostTensor>; // by IO.param(name), from runner.readParam
 * await saveLoraAdapter("/tmp/adapter", adapterFromHost(spec, trained, "Qwen/Qwen2.5-0.5B"));
 * ```
 */
export function adapterFromHost(
  spec: DecoderSpec,
  host: Readonly<Record<string, HostTensor>>,
  baseModel: string | null = null,
): LoraAdapter {
  if (spec.lora === null) throw new ModelError("spec.lora", "is null; a full model has no adapter");
  const r = spec.lora.rank;
  return loraAdapter(spec.config, spec.lora, (t) => ({
    a: hostData(host, { name: loraParamName(t.module, "A"), shape: [r, t.inFeatures] }),
    b: hostData(host, { name: loraParamName(t.module, "B"), shape: [t.outFeatures, r] }),
  }), baseModel);
}

/**
 * Feeds of a train-step runner's current parameters (trained ones from its device state, frozen
 * ones as bound), for generating with the policy as it trains.
 *
 * @example
 * ```ts
 * import type { TrainStepRunner } from "../onnx/train-step/mod.ts";
 * import type { GenerationRequest, Generator } from "./generate.ts";
 * import type { DecoderSpec } from "./parameters.ts";
 * import { runnerFeeds } from "./weights.ts";
 *
 * declare const spec: DecoderSpec;
 * declare const generator: Generator; // createGenerator(runtime, spec)
 * declare const runner: TrainStepRunner; // the policy's train step
 * declare const request: GenerationRequest;
 * await generator.generate(runnerFeeds(spec, runner), request);
 * ```
 */
export function runnerFeeds(spec: DecoderSpec, runner: TrainStepRunner): ParamFeeds {
  return Object.fromEntries(
    allParams(spec).map((p) => {
      if (runner.trainable.includes(p.name)) {
        return [IO.param(p.name), runner.state.get(IO.param(p.name))];
      }
      const frozen = runner.frozen[p.name];
      if (frozen === undefined) {
        throw new ModelError(
          p.name,
          "is a constant of the runner's graphs (constantFrozen), not a tensor to feed; feed the " +
            "base from uploadBase instead",
        );
      }
      return [IO.param(p.name), frozen];
    }),
  );
}
