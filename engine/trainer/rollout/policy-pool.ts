/**
 * Worker groups on one onnxruntime backend (Dr. MAS `agent_to_wg`): each group owns a policy
 * (LoRA adapter on a frozen base, full weights, or frozen), its train-step runner with AdamW state
 * on the device, and a KV-cache generator. Groups on the same base model feed one uploaded copy of
 * the base, however many adapters sit on it. LoRA dropout masks are drawn here, from the keyed
 * generator, so an update's masks are a pure function of (seed, wg, step, update, row, module).
 */
import { createHash } from "node:crypto";
import {
  encodeSafetensors,
  type HfModel,
  type HfTokenizer,
  loadHfModel,
  type NamedTensor,
  namedTensor,
} from "../../../adapters/hf/mod.ts";
import {
  adapterHostFeeds,
  allParams,
  baseHostFeeds,
  type BaseWeights,
  type BatchOptions,
  buildLogprobGraph,
  type ContinuousBatch,
  createGenerator,
  currentEmbeddedVersion,
  type DecoderSpec,
  decoderSpec,
  EMBEDDED_MODEL_DIR,
  type EmbeddedVersion,
  type FusedOp,
  type GeneratedRow,
  type Generator,
  initLoraAdapter,
  loadEmbeddedModel,
  loraSpec,
  MODEL_IO,
  paramCount,
  type ParamFeeds,
  runnerFeeds,
  trainableParams,
  trainStepConfig,
  uploadBase,
} from "../../../adapters/model/mod.ts";
import {
  type DropoutMaskFill,
  IO,
  logprobTemperature,
  type LossAggregation,
  openTrainStep,
  type PartedStepMetrics,
  type PolicyBatch,
  type TrainStepHyper,
  type TrainStepMetrics,
  type TrainStepRunner,
} from "../../../adapters/onnx/train-step/mod.ts";
import {
  type HostTensor,
  hostTensor,
  type Runtime,
  scalar,
  type Session,
} from "../../../adapters/onnx/runtime/mod.ts";
import type { NormalizedConfig, WorkerGroup } from "../../config/mod.ts";
import { fillNormal, randomStream, streamBlock } from "../../random/mod.ts";
import { decodeSafetensors } from "./safetensors-bytes.ts";

/** How one batch of continuations is sampled. */
export interface Sampling {
  /** New tokens per row at most. */
  readonly maxTokens: number;
  /**
   * The temperature `choose` samples at; the rows' logprobs are of softmax(logits / T), the
   * policy that sampled (T = 0, greedy: logprobs at T = 1).
   */
  readonly temperature: number;
  /** Picks row `row`'s token number `index` from its logits. */
  readonly choose: (logits: Float32Array, row: number, index: number) => number;
}

/**
 * Which optimizer update of a run a batch feeds: `update` counts the updates of one step (PPO
 * mini-batches and epochs). Keys the LoRA dropout masks, so they do not depend on execution order.
 */
export interface UpdateKey {
  readonly step: number;
  readonly update: number;
}

/** One worker group's policy. */
export interface GroupPolicy {
  readonly id: string;
  readonly agents: readonly string[];
  readonly model: string;
  /** Where the base weights came from, as `policy.initialized` records it (embedded: its hash). */
  readonly source: string;
  readonly spec: DecoderSpec;
  readonly tokenizer: HfTokenizer;
  readonly parameterCount: number;
  readonly trainableParameterCount: number;
  /** LoRA dropout rate the train step applies (0 for full and frozen groups), for the record. */
  readonly loraDropout: number;
  /** Samples continuations of every prompt with the group's current weights (no dropout). */
  generate(prompts: readonly (readonly number[])[], sampling: Sampling): Promise<GeneratedRow[]>;
  /**
   * A continuous decode batch on the group's current weights (no dropout), padding with the
   * tokenizer's pad token; close it before the weights change (an update).
   */
  openBatch(options: Pick<BatchOptions, "maxRows" | "admission">): ContinuousBatch;
  /**
   * Per-token logprobs of the batch's targets under the base model at the sampling temperature
   * (veRL's reference compute_log_prob uses the rollout temperature): the KL reference.
   */
  referenceLogprobs(batch: PolicyBatch, temperature: number): Promise<Float32Array>;
  /**
   * Per-token logprobs of the batch's targets under the group's current weights at the sampling
   * temperature, without dropout, by the train step's own forward (veRL recomputes old logprobs
   * with actor.compute_log_prob before update_policy): fed back as old logprobs, the next update
   * starts at ratio exactly 1 (without dropout). Frozen groups have none.
   */
  logprobs(batch: PolicyBatch, temperature: number): Promise<Float32Array>;
  /** One optimizer step, with the LoRA dropout masks of `key`; frozen groups cannot be updated. */
  update(batch: PolicyBatch, hyper: TrainStepHyper, key: UpdateKey): Promise<TrainStepMetrics>;
  /**
   * One optimizer step whose gradient is accumulated over consecutive row ranges of `parts` rows
   * (one per agent of a shared group), with each range's gradient norm: an agent's share of the
   * update at no extra backward pass (TrainStepRunner.stepInParts).
   */
  updateInParts(
    batch: PolicyBatch,
    hyper: TrainStepHyper,
    parts: readonly number[],
    key: UpdateKey,
  ): Promise<PartedStepMetrics>;
  /** The trained parameters (all of them for full training, the adapter for LoRA) by HF name. */
  trainedTensors(): Promise<NamedTensor[]>;
  /** sha256 over the trained parameters' names, shapes and float32 bytes, in spec order. */
  parameterHash(): Promise<string>;
  /**
   * Dr. MAS offload: moves the group's own device state (trained parameters, Adam moments) to
   * host memory and frees the device copies; returns the bytes moved (0 when frozen or already
   * offloaded). The shared frozen base stays, since other groups read it.
   */
  offload(): Promise<number>;
  /** Dr. MAS resume: puts offloaded state back on the device; returns the bytes moved. */
  load(): number;
  /** Safetensors bytes of `trainedTensors()`, for the checkpoint blob. */
  checkpoint(): Promise<Uint8Array>;
  /** Safetensors bytes of the AdamW state (moments and step count); null for frozen groups. */
  optimizerCheckpoint(): Promise<Uint8Array | null>;
  /** Puts the trained parameters and optimizer state of a checkpoint back on the device. */
  restore(checkpoint: Uint8Array, optimizer: Uint8Array): Promise<void>;
}

/** A group's model could not be set up. */
export class PolicyPoolError extends Error {
  override name = "PolicyPoolError";
}

/** Hashes named float32 tensors in the given order. */
export function hashTensors(tensors: readonly NamedTensor[]): string {
  const h = createHash("sha256");
  for (const t of tensors) {
    h.update(`${t.name}:${t.shape.join("x")}\n`);
    h.update(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
  }
  return h.digest("hex");
}

/**
 * The directory a model name stands for: the committed embedded model's, or the path itself.
 *
 * @example
 * ```ts
 * modelDirectory("embedded"); // ".../adapters/model/embedded/"
 * modelDirectory("/models/Qwen2.5-0.5B"); // "/models/Qwen2.5-0.5B"
 * ```
 */
export function modelDirectory(model: string): string {
  return model === "embedded" ? EMBEDDED_MODEL_DIR.pathname : model;
}

async function loadModel(name: string, embedded: EmbeddedVersion): Promise<HfModel> {
  const model = name === "embedded"
    ? await loadEmbeddedModel(embedded.dir)
    : await loadHfModel(name);
  if (!model.tokenizer) {
    throw new PolicyPoolError(
      `model ${name} has no tokenizer.json; the engine needs one to prompt it`,
    );
  }
  return model;
}

/**
 * LoRA dropout masks of one update: element e of row `row` of module `m` is dropped when word
 * e mod 4 of Philox block floor(e / 4) of the stream keyed (seed, "lora-dropout:" + m, step, wg,
 * update, row) is below rate * 2^32, else kept at 1 / (1 - rate) (inverted dropout, as
 * torch.nn.Dropout scales). DrawCoordinates has no update or batch-row field; the update takes
 * `turn` and the row `sample`, whose episode meanings are free here, and the module goes into
 * the purpose as init draws name their parameter. Keyed by row of the update's batch, the masks
 * do not depend on the micro-batch split or on the order of anything else.
 *
 * @example
 * ```ts
 * import type {
 *   PolicyBatch,
 *   TrainStepHyper,
 *   TrainStepRunner,
 * } from "../../../adapters/onnx/train-step/mod.ts";
 * declare const runner: TrainStepRunner; // the solver group's train step
 * declare const batch: PolicyBatch;
 * declare const hyper: TrainStepHyper;
 * await runner.step(batch, hyper, loraDropoutFill(7, "solver", 0.05, { step: 3, update: 0 }));
 * ```
 */
export function loraDropoutFill(
  seed: number,
  wg: string,
  rate: number,
  key: UpdateKey,
): DropoutMaskFill {
  const kept = Math.fround(1 / (1 - rate));
  const threshold = Math.round(rate * 2 ** 32);
  const block = new Uint32Array(4);
  return (module, row, out) => {
    const stream = randomStream({
      seed,
      purpose: `lora-dropout:${module}`,
      step: key.step,
      wg,
      turn: key.update,
      sample: row,
    });
    for (let e = 0; e < out.length; e += 4) {
      streamBlock(stream, e / 4, 0, block);
      for (let j = 0; j < 4 && e + j < out.length; j++) {
        out[e + j] = block[j] < threshold ? 0 : kept;
      }
    }
  };
}

/** A run's worker groups by id, and what releases their sessions and device memory. */
export interface PolicyPool {
  readonly groups: ReadonlyMap<string, GroupPolicy>;
  release(): Promise<void>;
}

/** What the pool needs of a run's config beyond its worker groups. */
export interface PolicyPoolOptions {
  readonly seed: number;
  /** 0 loads no KL reference. */
  readonly klCoef: number;
  /** config.loss.aggregation. */
  readonly aggregation: LossAggregation;
  /** The constant of seq-sum-const: the generation budget, sampling.max_tokens (Dr. GRPO). */
  readonly aggregationConstant: number;
  /** config.loss.clip_ratio_c: the dual clip's bound; 0 or absent builds none. */
  readonly dualClip?: number;
  /** config.loss.kl_clamp: the k3 estimate's bound; 0 or absent builds none. */
  readonly klClamp?: number;
  /** config.loss.entropy_coeff; absent is 0. */
  readonly entropyCoeff?: number;
  /** config.updates.micro_batch_size: rows per loss micro-batch; null or absent, the whole. */
  readonly lossMicroBatch?: number | null;
  /** config.runtime.fused_ops: decoder parts built as one node each (DecoderSpec.fused). */
  readonly fused?: readonly FusedOp[];
  /**
   * The weights `"embedded"` stands for: a replayed or resumed run's recorded ones
   * (recordedEmbeddedVersion); default the committed model.
   */
  readonly embedded?: EmbeddedVersion;
}

/**
 * The pool's options as a run's config sets them.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../../config/mod.ts";
 * import { policyPoolOptions } from "./policy-pool.ts";
 *
 * declare const config: NormalizedConfig;
 * const options = { ...policyPoolOptions(config), klCoef: 0 }; // a worker loads no KL reference
 * ```
 */
export function policyPoolOptions(config: NormalizedConfig): PolicyPoolOptions {
  return {
    seed: config.seed,
    klCoef: config.loss.kl_coef,
    aggregation: config.loss.aggregation,
    aggregationConstant: config.sampling.max_tokens,
    dualClip: config.loss.clip_ratio_c,
    klClamp: config.loss.kl_clamp,
    entropyCoeff: config.loss.entropy_coeff,
    lossMicroBatch: config.updates.micro_batch_size,
    fused: config.runtime.fused_ops,
  };
}

/**
 * Opens every worker group of a config on `runtime`. Initial adapters are drawn from the
 * counter-based generator keyed by (seed, wg), so they do not depend on group order.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../../config/mod.ts";
 * import type { Runtime } from "../../../adapters/onnx/runtime/mod.ts";
 * declare const runtime: Runtime;
 * declare const config: NormalizedConfig;
 * const pool = await openPolicyPool(runtime, config.worker_groups, policyPoolOptions(config));
 * const solver = pool.groups.get("solver");
 * ```
 */
export async function openPolicyPool(
  runtime: Runtime,
  groups: readonly WorkerGroup[],
  options: PolicyPoolOptions,
): Promise<PolicyPool> {
  const models = new Map<
    string,
    { model: HfModel; bases: Map<string, BaseWeights>; reference: Session | null }
  >();
  const releases: (() => Promise<void> | void)[] = [];
  const policies = new Map<string, GroupPolicy>();
  const embedded = options.embedded ?? await currentEmbeddedVersion();
  for (const wg of groups) {
    let entry = models.get(wg.model);
    if (!entry) {
      entry = { model: await loadModel(wg.model, embedded), bases: new Map(), reference: null };
      models.set(wg.model, entry);
    }
    const { model } = entry;
    const lora = wg.trainable.kind === "lora"
      ? loraSpec({
        rank: wg.trainable.rank,
        alpha: wg.trainable.alpha,
        targetModules: wg.trainable.targets,
        dropout: wg.trainable.dropout,
      })
      : null;
    const specOptions = { fused: options.fused ?? [] };
    const spec = decoderSpec(model.config, lora, specOptions);
    // LoRA and frozen groups read the shared base; full training owns a copy in its runner.
    // The base is the frozen weights of LoRA and frozen groups, and the KL reference of all.
    let base = entry.bases.get("base");
    if (!base && (wg.trainable.kind !== "full" || options.klCoef > 0)) {
      base = uploadBase(runtime, spec, model.tensors);
      entry.bases.set("base", base);
      releases.push(() => base!.release());
    }
    const generator = await createGenerator(runtime, spec);
    releases.push(() => generator.release());
    let runner: TrainStepRunner | null = null;
    if (wg.trainable.kind !== "frozen") {
      const initial: Record<string, HostTensor> = {};
      const source = lora
        ? adapterHostFeeds(
          spec,
          initLoraAdapter(
            spec,
            (purpose, out, std) =>
              fillNormal(randomStream({ seed: options.seed, purpose, wg: wg.id }), out, { std }),
            wg.id,
          ),
        )
        : baseHostFeeds(spec, model.tensors);
      for (const p of trainableParams(spec)) initial[p.name] = source[IO.param(p.name)];
      runner = await openTrainStep({
        runtime,
        config: {
          ...trainStepConfig(spec),
          aggregation: options.aggregation,
          aggregationConstant: options.aggregationConstant,
          kl: options.klCoef > 0 ? "k3" : null,
          dualClip: options.dualClip || null,
          klClamp: options.klClamp || null,
          entropyCoeff: options.entropyCoeff,
          lossMicroBatch: options.lossMicroBatch ?? undefined,
          adam: { beta1: wg.optimizer.beta1, beta2: wg.optimizer.beta2, eps: wg.optimizer.eps },
        },
        initial,
        frozen: lora ? base!.tensors : undefined,
      });
      const r = runner;
      releases.push(() => r.release());
    }
    let reference: Session | null = entry.reference;
    if (!reference && options.klCoef > 0) {
      reference = await runtime.load(
        buildLogprobGraph(decoderSpec(model.config, null, specOptions)).model,
      );
      entry.reference = reference;
      const r = reference;
      releases.push(() => r.release());
    }
    policies.set(
      wg.id,
      groupPolicy(
        wg,
        wg.model === "embedded" ? embedded.source : wg.model,
        options.seed,
        model,
        spec,
        generator,
        runner,
        base ?? null,
        reference,
      ),
    );
  }
  return {
    groups: policies,
    release: async () => {
      for (const release of releases.reverse()) await release();
    },
  };
}

/** Device-state names of the AdamW state of `params`: both moments per parameter, then the step. */
function optimizerStateNames(params: readonly { name: string }[]): string[] {
  return [...params.flatMap((p) => [IO.adamM(p.name), IO.adamV(p.name)]), IO.adamStep];
}

/**
 * A policy's `generate`: `generator` over the weights `feeds` returns at call time (an update
 * changes them), stopping at the tokenizer's end tokens and padding with its pad token.
 *
 * @example
 * ```ts
 * import type { HfTokenizer } from "../../../adapters/hf/mod.ts";
 * import type { BaseWeights, Generator } from "../../../adapters/model/mod.ts";
 * declare const generator: Generator; // createGenerator(runtime, spec)
 * declare const tokenizer: HfTokenizer;
 * declare const base: BaseWeights; // uploadBase(runtime, spec, tensors)
 * declare const sampling: Sampling;
 * const generate = generateWith(generator, tokenizer, () => base.feeds);
 * const rows = await generate([[1, 2, 3]], sampling);
 * ```
 */
export function generateWith(
  generator: Generator,
  tokenizer: HfTokenizer,
  feeds: () => ParamFeeds,
): GroupPolicy["generate"] {
  return (prompts, sampling) =>
    generator.generate(feeds(), {
      prompts,
      maxTokens: sampling.maxTokens,
      temperature: sampling.temperature,
      choose: sampling.choose,
      stopTokenIds: tokenizer.eosTokenIds,
      padTokenId: tokenizer.padTokenId ?? 0,
    });
}

/**
 * A policy's `openBatch`: a continuous batch over the weights `feeds` returns when it opens (a
 * batch lives within one rollout phase, between updates), padding with the tokenizer's pad token.
 *
 * @example
 * ```ts
 * import type { HfTokenizer } from "../../../adapters/hf/mod.ts";
 * import type { BaseWeights, Generator } from "../../../adapters/model/mod.ts";
 * declare const generator: Generator; // createGenerator(runtime, spec)
 * declare const tokenizer: HfTokenizer;
 * declare const base: BaseWeights; // uploadBase(runtime, spec, tensors)
 * const openBatch = openBatchWith(generator, tokenizer, () => base.feeds);
 * const batch = openBatch({ maxRows: 64, admission: "doubling" });
 * ```
 */
export function openBatchWith(
  generator: Generator,
  tokenizer: HfTokenizer,
  feeds: () => ParamFeeds,
): GroupPolicy["openBatch"] {
  return (options) =>
    generator.openBatch(feeds(), { ...options, padTokenId: tokenizer.padTokenId ?? 0 });
}

function groupPolicy(
  wg: WorkerGroup,
  source: string,
  seed: number,
  model: HfModel,
  spec: DecoderSpec,
  generator: Generator,
  runner: TrainStepRunner | null,
  base: BaseWeights | null,
  reference: Session | null,
): GroupPolicy {
  const tokenizer = model.tokenizer!;
  const trained = trainableParams(spec);
  // The rate the train step applies (its graphs take masks exactly when it is > 0).
  const loraDropout = runner && spec.lora ? spec.lora.dropout : 0;
  const masks = (key: UpdateKey) =>
    loraDropout > 0 ? loraDropoutFill(seed, wg.id, loraDropout, key) : undefined;
  const trainer = (method: string): TrainStepRunner => {
    if (!runner) {
      throw new PolicyPoolError(
        `worker group ${wg.id} is frozen and cannot train; ${method} needs a lora or full group`,
      );
    }
    return runner;
  };
  let parked: Map<string, HostTensor> | null = null;
  const trainedTensors = async () => {
    if (!runner) return [...model.tensors.values()];
    const out: NamedTensor[] = [];
    for (const p of trained) {
      const t = await runner.readParam(p.name);
      out.push(namedTensor(p.name, p.shape, Float32Array.from(t.data as Float32Array)));
    }
    return out;
  };
  // An update changes the runner's weights, so policies read them at each call.
  const feeds = () => runner ? runnerFeeds(spec, runner) : base!.feeds;
  const policy: GroupPolicy = {
    id: wg.id,
    agents: wg.agents,
    model: wg.model,
    source,
    spec,
    tokenizer,
    parameterCount: paramCount(allParams(spec)),
    trainableParameterCount: runner ? paramCount(trained) : 0,
    loraDropout,
    generate: generateWith(generator, tokenizer, feeds),
    openBatch: openBatchWith(generator, tokenizer, feeds),
    update: async (batch, hyper, key) => await trainer("update").step(batch, hyper, masks(key)),
    updateInParts: async (batch, hyper, parts, key) =>
      await trainer("updateInParts").stepInParts(batch, hyper, parts, masks(key)),
    logprobs: async (batch, temperature) => await trainer("logprobs").logprobs(batch, temperature),
    referenceLogprobs: async (batch, temperature) => {
      if (!reference || !base) {
        throw new PolicyPoolError("no KL reference was loaded: the config's loss.kl_coef is 0");
      }
      const dims = [batch.batch, batch.seq];
      const out = await reference.run({
        ...base.feeds,
        [MODEL_IO.tokens]: hostTensor("int32", dims, batch.tokens),
        [MODEL_IO.targets]: hostTensor("int32", dims, batch.targets),
        [MODEL_IO.attentionMask]: hostTensor("float32", dims, batch.attentionMask),
        [MODEL_IO.temperature]: scalar(logprobTemperature(temperature)),
      });
      return Float32Array.from(out.host[MODEL_IO.logprobs].data as Float32Array);
    },
    trainedTensors,
    offload: async () => {
      if (!runner || parked) return 0;
      const host = new Map<string, HostTensor>();
      for (const name of runner.state.names()) host.set(name, await runner.state.read(name));
      runner.state.release();
      parked = host;
      return [...host.values()].reduce((n, t) => n + t.data.byteLength, 0);
    },
    load: () => {
      if (!runner || !parked) return 0;
      let bytes = 0;
      for (const [name, tensor] of parked) {
        runner.state.write(name, tensor);
        bytes += tensor.data.byteLength;
      }
      parked = null;
      return bytes;
    },
    parameterHash: async () => hashTensors(await trainedTensors()),
    checkpoint: async () => encodeSafetensors(await trainedTensors()),
    optimizerCheckpoint: async () => {
      if (!runner) return null;
      const out: NamedTensor[] = [];
      for (const name of optimizerStateNames(trained)) {
        const t = await runner.state.read(name);
        out.push(namedTensor(name, t.dims, Float32Array.from(t.data as Float32Array)));
      }
      return encodeSafetensors(out);
    },
    restore: (checkpoint, optimizer) => {
      if (!runner) {
        return Promise.reject(
          new PolicyPoolError(`worker group ${wg.id} is frozen; it has no checkpoint to restore`),
        );
      }
      const params = decodeSafetensors(checkpoint, `checkpoint of ${wg.id}`);
      const moments = decodeSafetensors(optimizer, `optimizer state of ${wg.id}`);
      const take = (from: Map<string, NamedTensor>, name: string, what: string) => {
        const t = from.get(name);
        if (!t) {
          throw new PolicyPoolError(
            `${what} of worker group ${wg.id} lacks ${name}; it holds ${
              [...from.keys()].join(", ")
            }`,
          );
        }
        return hostTensor("float32", t.shape, t.data);
      };
      for (const p of trained) {
        runner.state.write(IO.param(p.name), take(params, p.name, "checkpoint"));
      }
      for (const name of optimizerStateNames(trained)) {
        runner.state.write(name, take(moments, name, "optimizer state"));
      }
      return Promise.resolve();
    },
  };
  return Object.freeze(policy);
}
