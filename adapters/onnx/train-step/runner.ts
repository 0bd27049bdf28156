/**
 * Runs train steps on a runtime: parameters, Adam moments, gradient accumulators and the step
 * counter stay in device state between steps; frozen parameters are bound once (and may be shared
 * by several runners, e.g. one LoRA adapter per agent on one frozen base, without a copy each).
 */
import { tensor, type TensorData } from "../ir.ts";
import {
  createDeviceState,
  type DeviceState,
  type DeviceTensor,
  type Feed,
  type HostTensor,
  hostTensor,
  type Runtime,
  scalar,
  type Session,
} from "../runtime/mod.ts";
import {
  batchFeeds,
  batchRows,
  checkBatch,
  countLossTokens,
  dropoutMaskFeeds,
  type DropoutMaskFill,
  lossDenominator,
  type PolicyBatch,
  rowDenominators,
  splitBatch,
} from "./batch.ts";
import {
  buildTrainStep,
  type TrainStepConstants,
  type TrainStepGraph,
  type TrainStepKind,
} from "./graph.ts";
import {
  IO,
  logprobTemperature,
  trainableNames,
  type TrainStepConfig,
  TrainStepError,
} from "./spec.ts";

/** Per-step hyperparameters (fed as graph scalars; change them any step without rebuilding). */
export interface TrainStepHyper {
  readonly lr: number;
  readonly clipLow: number;
  readonly clipHigh: number;
  readonly klCoef: number;
  readonly weightDecay: number;
  /** +Infinity disables clipping. */
  readonly maxGradNorm: number;
  /**
   * The temperature the batch was sampled at: the ratio, KL and entropy are of
   * softmax(logits / T), the policy that sampled; 0 (greedy) takes logprobs at T = 1 (see
   * `logprobTemperature`). The batch's old and reference logprobs must be taken at the same T.
   */
  readonly temperature: number;
}

/** What one optimizer step reports (for the gradient-step event). */
export interface TrainStepMetrics {
  readonly loss: number;
  readonly policyLoss: number;
  readonly klLoss: number;
  readonly clipFraction: number;
  readonly approxKl: number;
  readonly entropy: number;
  /** With a dual clip: the largest ratio new / old over the loss tokens. */
  readonly maxRatio?: number;
  /** With a dual clip: the fraction of loss tokens whose loss it capped. */
  readonly dualClipFraction?: number;
  /** With a KL clamp: the fraction of loss tokens whose k3 estimate it clamped. */
  readonly klClampFraction?: number;
  /** Global gradient norm before clipping. */
  readonly gradNorm: number;
  /** True when the gradient was not finite and nothing was updated. */
  readonly skipped: boolean;
  /** Optimizer updates applied so far, this one included. */
  readonly appliedSteps: number;
  readonly microBatches: number;
  readonly lossTokens: number;
}

/** A step's metrics with the gradient norm of each part it was accumulated over. */
export interface PartedStepMetrics extends TrainStepMetrics {
  readonly partGradNorms: readonly number[];
}

/** How to open a runner. */
export interface TrainStepRunnerOptions {
  readonly runtime: Runtime;
  readonly config: TrainStepConfig;
  /** Initial values of every parameter not in `frozen`. */
  readonly initial: Readonly<Record<string, HostTensor>>;
  /** Frozen parameters already on the device, shared and not freed by this runner. */
  readonly frozen?: Readonly<Record<string, DeviceTensor>>;
  /** Sequences per micro-batch; omitted, each batch runs as one fused graph. */
  readonly microBatchSize?: number;
  /** Every step has one batch shape: its sessions keep their memory (SessionOptions.fixedShape). */
  readonly fixedShape?: boolean;
  /**
   * The frozen parameters given in `initial` become constants of the graphs instead of feeds
   * (TrainStepConstants: prepacked by the cpu EP, values different in the low bits). They are then
   * in every session's memory, not on the device once, and not in `frozen`.
   */
  readonly constantFrozen?: boolean;
}

/** A loaded train step with its device state. */
export interface TrainStepRunner {
  /** Parameters that are trained, in config order. */
  readonly trainable: readonly string[];
  /** Frozen parameters as fed to every run (the shared tensors when given). */
  readonly frozen: Readonly<Record<string, DeviceTensor>>;
  /** Parameters, moments (`IO.adamM(name)`, `IO.adamV(name)`), `IO.adamStep`, gradient sums. */
  readonly state: DeviceState;
  /**
   * One optimizer step on `batch` (micro-batched when the runner was opened so). `masks` fills
   * the config's dropout masks; required exactly when the config has some.
   */
  step(
    batch: PolicyBatch,
    hyper: TrainStepHyper,
    masks?: DropoutMaskFill,
  ): Promise<TrainStepMetrics>;
  /**
   * One optimizer step on `batch` whose gradient is accumulated over consecutive row ranges of
   * `parts` rows each (they must cover the batch), reporting each range's own gradient norm: the
   * loss keeps the whole batch's denominators, so the parts' gradients sum to the step's, and one
   * agent's share of a shared worker group's update costs no extra backward pass. The same update
   * as `step` up to float rounding (sums are taken in another order). The graphs are built on
   * first use; in a micro-batched runner a part must fit in one micro-batch.
   */
  stepInParts(
    batch: PolicyBatch,
    hyper: TrainStepHyper,
    parts: readonly number[],
    masks?: DropoutMaskFill,
  ): Promise<PartedStepMetrics>;
  /**
   * log p(target) [batch * seq] at the current parameters and logprob temperature of
   * `temperature`, without dropout: the step's own forward (same graph ops, same micro-batch
   * split), so a step fed these as old logprobs starts at ratio 1. The graph is built on first use.
   */
  logprobs(batch: PolicyBatch, temperature: number): Promise<Float32Array>;
  /** Copies a trainable parameter to the host. */
  readParam(name: string): Promise<HostTensor>;
  /** Frees sessions, state and owned frozen parameters. */
  release(): Promise<void>;
}

interface Loaded {
  readonly graph: TrainStepGraph;
  readonly session: Session;
}

/** How the runner's sessions are built and loaded, the same for each kind. */
interface LoadOptions {
  readonly fixedShape: boolean;
  readonly constants: TrainStepConstants;
}

async function load(
  runtime: Runtime,
  config: TrainStepConfig,
  kind: TrainStepKind,
  { fixedShape, constants }: LoadOptions,
) {
  const graph = buildTrainStep(config, kind, constants);
  const session = await runtime.load(graph.model, {
    keepOnDevice: graph.stateBindings.map((b) => b.output),
    name: `train-step ${kind}`,
    fixedShape,
    ...(graph.externalData ? { externalData: graph.externalData } : {}),
  });
  return { graph, session };
}

function hyperFeeds(h: TrainStepHyper): Record<string, HostTensor> {
  return {
    [IO.temperature]: scalar(logprobTemperature(h.temperature)),
    [IO.lr]: scalar(h.lr),
    [IO.clipLow]: scalar(h.clipLow),
    [IO.clipHigh]: scalar(h.clipHigh),
    [IO.klCoef]: scalar(h.klCoef),
    [IO.weightDecay]: scalar(h.weightDecay),
    [IO.maxGradNorm]: scalar(h.maxGradNorm),
  };
}

/**
 * Builds the graphs, loads them and uploads the initial state (moments and step start at 0).
 *
 * @example
 * ```ts
 * import type { HostTensor, Runtime } from "../runtime/mod.ts";
 * import type { PolicyBatch } from "./batch.ts";
 * import { openTrainStep } from "./runner.ts";
 * import type { TrainStepConfig } from "./spec.ts";
 *
 * declare const runtime: Runtime;
 * declare const config: TrainStepConfig;
 * declare const weights: Record<string, HostTensor>;
 * declare const batch: PolicyBatch;
 * const runner = await openTrainStep({ runtime, config, initial: weights });
 * const metrics = await runner.step(batch, { lr: 1e-5, clipLow: 0.2, clipHigh: 0.28,
 *   klCoef: 0, weightDecay: 0.01, maxGradNorm: 1, temperature: 1 });
 * ```
 */
export async function openTrainStep(options: TrainStepRunnerOptions): Promise<TrainStepRunner> {
  const { runtime, config } = options;
  const trainable = trainableNames(config);
  const constant = config.aggregationConstant;
  const needsConstant = config.aggregation === "seq-sum-const" ||
    config.aggregation === "seq-mean-token-sum-norm";
  if (needsConstant && !(constant !== undefined && constant > 0)) {
    throw new TrainStepError(
      `${config.aggregation} needs aggregationConstant > 0 (e.g. the max response length), got ` +
        `${constant}`,
    );
  }
  const lossMicro = config.lossMicroBatch;
  if (lossMicro !== undefined && !(Number.isInteger(lossMicro) && lossMicro >= 1)) {
    throw new TrainStepError(`lossMicroBatch must be a whole number >= 1, got ${lossMicro}`);
  }
  const shared = options.frozen ?? {};
  for (const name of Object.keys(shared)) {
    if (trainable.includes(name)) {
      throw new TrainStepError(`frozen names ${name}, which is trainable in this config`);
    }
  }
  const frozen: Record<string, DeviceTensor> = { ...shared };
  const owned: DeviceTensor[] = [];
  const constantValues: Record<string, TensorData> = {};
  const state = createDeviceState(runtime);
  for (const p of config.params) {
    if (p.name in shared) continue;
    const value = options.initial[p.name];
    if (!value) throw new TrainStepError(`initial lacks parameter ${p.name}`);
    if (value.dims.join() !== p.shape.join()) {
      throw new TrainStepError(`initial ${p.name} has dims [${value.dims}], spec [${p.shape}]`);
    }
    if (value.dtype !== (p.dtype ?? "float32")) {
      throw new TrainStepError(
        `initial ${p.name} is ${value.dtype}, spec ${p.dtype ?? "float32"}; convert it ` +
          "(adapters/model's paramHostTensor) or change the spec",
      );
    }
    if (trainable.includes(p.name)) {
      const zeros = hostTensor("float32", p.shape, new Float32Array(value.data.length));
      state.write(IO.param(p.name), value);
      state.write(IO.adamM(p.name), zeros);
      state.write(IO.adamV(p.name), zeros);
    } else if (options.constantFrozen) {
      constantValues[p.name] = tensor(value.dtype, value.dims, value.data);
    } else {
      frozen[p.name] = runtime.upload(value);
      owned.push(frozen[p.name]);
    }
  }
  const loadOptions: LoadOptions = {
    fixedShape: options.fixedShape ?? false,
    constants: { values: constantValues },
  };
  state.write(IO.adamStep, scalar(0));
  const frozenFeeds: Record<string, Feed> = {};
  for (const [name, t] of Object.entries(frozen)) frozenFeeds[IO.param(name)] = t;

  const micro = options.microBatchSize;
  const loadAccumulateApply = async (): Promise<readonly [Loaded, Loaded]> => {
    const loaded = [
      await load(runtime, config, "accumulate", loadOptions),
      await load(runtime, config, "apply", loadOptions),
    ] as const;
    // The accumulate graph reads the gradient sums even when it restarts them; start at zero.
    for (const sum of loaded[0].graph.gradientSums) {
      const size = sum.shape.reduce((a, b) => a * b, 1);
      state.write(sum.name, hostTensor("float32", sum.shape, new Float32Array(size)));
    }
    return loaded;
  };
  const fused = micro === undefined ? await load(runtime, config, "fused", loadOptions) : null;
  let accumulateApply: Promise<readonly [Loaded, Loaded]> | null = micro === undefined
    ? null
    : Promise.resolve(await loadAccumulateApply());
  const withReference = (config.kl ?? null) !== null;
  const maskSpecs = config.dropoutMasks ?? [];
  let logprobSession: Promise<Loaded> | null = null;
  const aggregation = config.aggregation ?? "token-mean";
  const wholeBatch = (batch: PolicyBatch) => ({
    lossDenominator: lossDenominator(aggregation, batch, config.aggregationConstant),
    tokenCount: countLossTokens(batch).tokens,
    rowDenominators: config.lossMicroBatch === undefined
      ? undefined
      : rowDenominators(aggregation, batch, config.lossMicroBatch, config.aggregationConstant),
  });
  const maskFeeds = (
    masks: DropoutMaskFill | undefined,
    part: PolicyBatch,
    first: number,
  ): Record<string, HostTensor> => {
    if (maskSpecs.length === 0) {
      if (masks) {
        throw new TrainStepError(
          "a DropoutMaskFill was given but the config has no dropoutMasks; pass none",
        );
      }
      return {};
    }
    if (!masks) {
      throw new TrainStepError(
        `the config has ${maskSpecs.length} dropout masks (${maskSpecs[0].name}, ...); pass a ` +
          "DropoutMaskFill to step and gradientNorm",
      );
    }
    return dropoutMaskFeeds(maskSpecs, masks, part, first);
  };

  const run = (loaded: Loaded, feeds: Record<string, Feed>) => {
    const inputs = new Set(loaded.session.inputNames);
    const picked: Record<string, Feed> = {};
    for (const [name, feed] of Object.entries({ ...feeds, ...frozenFeeds })) {
      if (inputs.has(name)) picked[name] = feed;
    }
    return state.run(loaded.session, picked, loaded.graph.stateBindings);
  };

  const metricsOf = (
    sums: Readonly<Record<string, HostTensor>> | Record<string, number>,
    last: Readonly<Record<string, HostTensor>>,
    whole: { tokenCount: number },
    parts: number,
  ): TrainStepMetrics => {
    const value = (name: string) => {
      const v = (sums as Record<string, HostTensor | number>)[name];
      return typeof v === "number" ? v : v.data[0] as number;
    };
    // Present only where the graph computes them (a dual clip, a KL clamp).
    const optional = (key: string, name: string) => name in sums ? { [key]: value(name) } : {};
    return Object.freeze({
      loss: value(IO.loss),
      policyLoss: value(IO.policyLoss),
      klLoss: value(IO.klLoss),
      clipFraction: value(IO.clipFraction),
      approxKl: value(IO.approxKl),
      entropy: value(IO.entropy),
      ...optional("maxRatio", IO.maxRatio),
      ...optional("dualClipFraction", IO.dualClipFraction),
      ...optional("klClampFraction", IO.klClampFraction),
      gradNorm: last[IO.gradNorm].data[0] as number,
      skipped: last[IO.skipped].data[0] !== 0,
      appliedSteps: last[IO.appliedSteps].data[0] as number,
      microBatches: parts,
      lossTokens: whole.tokenCount,
    });
  };

  /** Accumulates the gradient over consecutive row ranges of `sizes` rows, then applies it. */
  const accumulateThenApply = async (
    batch: PolicyBatch,
    hyper: TrainStepHyper,
    sizes: readonly number[],
    masks: DropoutMaskFill | undefined,
  ): Promise<PartedStepMetrics> => {
    accumulateApply ??= loadAccumulateApply();
    const [accumulate, apply] = await accumulateApply;
    const whole = wholeBatch(batch);
    const hp = hyperFeeds(hyper);
    const sums: Record<string, number> = {};
    const partGradNorms: number[] = [];
    let start = 0;
    for (const [i, size] of sizes.entries()) {
      const part = batchRows(batch, start, size);
      const out = await run(accumulate, {
        ...batchFeeds(part, whole, withReference, start),
        ...maskFeeds(masks, part, start),
        ...hp,
        [IO.accumulate]: scalar(i === 0 ? 0 : 1),
      });
      for (const name of accumulate.graph.metrics) {
        if (name === IO.gradNorm) continue;
        // Token means over the whole batch add up over its parts; the largest ratio is a max.
        const v = out[name].data[0] as number;
        sums[name] = name === IO.maxRatio ? Math.max(sums[name] ?? v, v) : (sums[name] ?? 0) + v;
      }
      partGradNorms.push(out[IO.gradNorm].data[0] as number);
      start += size;
    }
    const last = await run(apply, hp);
    return Object.freeze({
      ...metricsOf(sums, last, whole, sizes.length),
      partGradNorms: Object.freeze(partGradNorms),
    });
  };

  return Object.freeze({
    trainable,
    frozen: Object.freeze(frozen),
    state,
    step: async (
      batch: PolicyBatch,
      hyper: TrainStepHyper,
      masks?: DropoutMaskFill,
    ): Promise<TrainStepMetrics> => {
      checkBatch(batch);
      if (fused) {
        const whole = wholeBatch(batch);
        const out = await run(fused, {
          ...batchFeeds(batch, whole, withReference),
          ...maskFeeds(masks, batch, 0),
          ...hyperFeeds(hyper),
        });
        return metricsOf(out, out, whole, 1);
      }
      const sizes = splitBatch(batch, micro!).map((part) => part.batch);
      const { partGradNorms: _norms, ...metrics } = await accumulateThenApply(
        batch,
        hyper,
        sizes,
        masks,
      );
      return Object.freeze(metrics);
    },
    stepInParts: async (
      batch: PolicyBatch,
      hyper: TrainStepHyper,
      parts: readonly number[],
      masks?: DropoutMaskFill,
    ) => {
      checkBatch(batch);
      if (parts.reduce((n, p) => n + p, 0) !== batch.batch) {
        throw new TrainStepError(
          `stepInParts: parts [${parts}] cover ${parts.reduce((n, p) => n + p, 0)} rows of a ` +
            `batch of ${batch.batch}; they must cover it exactly`,
        );
      }
      const tooLarge = micro === undefined ? undefined : parts.find((p) => p > micro);
      if (tooLarge !== undefined) {
        throw new TrainStepError(
          `stepInParts: a part of ${tooLarge} rows exceeds the runner's microBatchSize ${micro}; ` +
            "each part's gradient norm is taken in one pass",
        );
      }
      return await accumulateThenApply(batch, hyper, parts, masks);
    },
    logprobs: async (batch: PolicyBatch, temperature: number) => {
      checkBatch(batch);
      const feedTemperature = scalar(logprobTemperature(temperature));
      logprobSession ??= load(runtime, config, "logprobs", loadOptions);
      const loaded = await logprobSession;
      const out = new Float32Array(batch.batch * batch.seq);
      const parts = micro === undefined ? [batch] : splitBatch(batch, micro);
      let at = 0;
      for (const part of parts) {
        const dims = [part.batch, part.seq];
        const result = await run(loaded, {
          [IO.tokens]: hostTensor("int32", dims, part.tokens),
          [IO.targets]: hostTensor("int32", dims, part.targets),
          [IO.attentionMask]: hostTensor("float32", dims, part.attentionMask),
          [IO.temperature]: feedTemperature,
        });
        out.set(result[IO.logprobs].data as Float32Array, at);
        at += part.batch * part.seq;
      }
      return out;
    },
    readParam: (name: string) => {
      if (!trainable.includes(name)) {
        throw new TrainStepError(`${name} is not trainable; trainable: ${trainable.join(", ")}`);
      }
      return state.read(IO.param(name));
    },
    // Tensors first: a GPU output freed after its session is gone crashes ORT-web.
    release: async () => {
      state.release();
      for (const t of owned) t.dispose();
      if (fused) await fused.session.release();
      if (accumulateApply) {
        for (const { session } of await accumulateApply) await session.release();
      }
      if (logprobSession) await (await logprobSession).session.release();
    },
  });
}
