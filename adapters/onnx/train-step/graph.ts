/**
 * Builds the train-step graphs for the clipped policy objective:
 * - `fused`: forward, backward and the guarded AdamW step in one graph (one run per batch);
 * - `accumulate`: forward and backward of one micro-batch, adding its gradient to the running sum;
 * - `apply`: the guarded AdamW step on the accumulated gradient.
 * Running `accumulate` on every micro-batch and then `apply` gives the same update as `fused` on
 * the whole batch, because the loss denominators are fed for the whole batch; `accumulate` also
 * reports the global norm of its own part of the gradient (one agent's share of a shared worker
 * group's update, at no extra backward pass). `logprobs` shares the forward: log p(target) without
 * dropout, the numbers the objective's ratio starts from.
 */
import { gradients } from "../autodiff.ts";
import { Graph, type TensorData, type Value } from "../ir.ts";
import { toOnnxModel, toOnnxModelWithExternalData } from "../onnx-writer.ts";
import type { ExternalData } from "../runtime/mod.ts";
import { add, greater } from "../ops/binary.ts";
import { where } from "../ops/select.ts";
import { unsqueeze } from "../ops/shape.ts";
import { globalNorm, optimizerStep, rowGroups, stackRows, unstackRows } from "../optim/mod.ts";
import { policyObjective, targetLogprobs, temperedLogSoftmax } from "./loss.ts";
import { IO, trainableNames, type TrainStepConfig, TrainStepError } from "./spec.ts";

/**
 * `fused`: gradient and optimizer update in one graph; `accumulate` + `apply`: the same split over
 * parts of the batch (micro-batches, or one part per agent); `logprobs`: the train step's forward
 * up to log p(target), with no dropout (old logprobs at the current weights).
 */
export type TrainStepKind = "fused" | "accumulate" | "apply" | "logprobs";

/** A built graph with its serialized model and the names the runner binds. */
export interface TrainStepGraph {
  readonly kind: TrainStepKind;
  readonly graph: Graph;
  readonly model: Uint8Array;
  /** The file of the model's constants, where they are written outside it (TrainStepConstants). */
  readonly externalData?: ExternalData;
  /** Output -> state input pairs (parameters, moments, accumulators, step counter). */
  readonly stateBindings: readonly { readonly state: string; readonly output: string }[];
  /** Scalar outputs returned to the host. */
  readonly metrics: readonly string[];
  /** `accumulate` and `apply`: the running gradient sums they read (the runner starts them at 0). */
  readonly gradientSums: readonly GradientSum[];
}

/**
 * One running gradient sum: the gradients of same-layout trainable parameters stacked along axis
 * 0 (optim/row-groups.ts), so that accumulating is two nodes per group rather than per tensor and
 * the optimizer reads the stack as it is. Parameter k's gradient is the row-major slice after the
 * elements of the parameters before it.
 */
export interface GradientSum {
  /** Graph input (and state) name, `IO.gradSum(group)`. */
  readonly name: string;
  /** Output of `accumulate` that replaces it, `IO.gradSumNext(group)`. */
  readonly next: string;
  readonly shape: readonly number[];
  /** Trainable parameters whose gradients are stacked, in order. */
  readonly params: readonly string[];
}

const BATCH = "batch";
const SEQ = "seq";

/**
 * Frozen parameters written into the graph as constants (initializers) instead of being fed, by
 * HF name: onnxruntime's cpu EP then prepacks them for its matrix kernels once per session, where
 * a fed weight is packed again at every run. The packed kernels add in another order, so the
 * values differ from a fed weight's in the low bits: a run that uses them must say so.
 */
export interface TrainStepConstants {
  readonly values: Readonly<Record<string, TensorData>>;
  /**
   * Constants of this many bytes in all or more are written to an external data file (protobuf
   * caps a model at 2 GB); default 1 GiB.
   */
  readonly externalFromBytes?: number;
}

const EXTERNAL_FROM_BYTES = 1024 * 1024 * 1024;
/** The external data file's name in the model. */
const CONSTANTS_FILE = "constants.bin";

/**
 * Builds one train-step graph.
 *
 * @example
 * ```ts
 * import type { Runtime } from "../runtime/mod.ts";
 * import { buildTrainStep } from "./graph.ts";
 * import type { TrainStepConfig } from "./spec.ts";
 *
 * declare const runtime: Runtime;
 * declare const config: TrainStepConfig;
 * const fused = buildTrainStep(config, "fused");
 * const session = await runtime.load(fused.model, {
 *   keepOnDevice: fused.stateBindings.map((b) => b.output),
 * });
 * ```
 */
export function buildTrainStep(
  config: TrainStepConfig,
  kind: TrainStepKind,
  constants: TrainStepConstants = { values: {} },
): TrainStepGraph {
  const trainable = trainableNames(config);
  const g = new Graph(`train-step-${kind}`);
  const f32 = (name: string, shape: readonly (number | string)[] = []) =>
    g.input(name, "float32", shape);
  const bindings: { state: string; output: string }[] = [];
  const metrics: string[] = [];
  const publish = (value: Value, name: string) => {
    g.output(value, name);
    metrics.push(name);
  };

  const specs = kind === "apply"
    ? config.params.filter((p) => trainable.includes(p.name))
    : config.params;
  const params: Record<string, Value> = {};
  for (const p of specs) {
    const constant = constants.values[p.name];
    if (constant !== undefined && trainable.includes(p.name)) {
      throw new TrainStepError(
        `constant ${p.name} is trainable in this config; only frozen ones can be`,
      );
    }
    params[p.name] = constant === undefined
      ? g.input(IO.param(p.name), p.dtype ?? "float32", p.shape)
      : g.initializer(IO.param(p.name), constant);
  }

  if (kind === "logprobs") {
    const tokens = g.input(IO.tokens, "int32", [BATCH, SEQ]);
    const targets = g.input(IO.targets, "int32", [BATCH, SEQ]);
    const attentionMask = f32(IO.attentionMask, [BATCH, SEQ]);
    const logits = config.policy({ params, tokens, attentionMask });
    checkLogits(logits);
    g.output(targetLogprobs(temperedLogSoftmax(logits, f32(IO.temperature)), targets), IO.logprobs);
    return finish(kind, g, constants, bindings, metrics, []);
  }

  const sums = kind === "accumulate" || kind === "apply" ? gradientSums(config, trainable) : [];
  let grads: Value[];
  let stackedGrads: Value[] | undefined;
  if (kind === "apply") {
    stackedGrads = sums.map((sum) => f32(sum.name, sum.shape));
    grads = new Array(trainable.length);
    sums.forEach((sum, k) => {
      const pieces = unstackRows(stackedGrads![k], sum.params.map((name) => params[name]));
      sum.params.forEach((name, j) => (grads[trainable.indexOf(name)] = pieces[j]));
    });
  } else {
    const tokens = g.input(IO.tokens, "int32", [BATCH, SEQ]);
    const targets = g.input(IO.targets, "int32", [BATCH, SEQ]);
    const attentionMask = f32(IO.attentionMask, [BATCH, SEQ]);
    const lossMask = f32(IO.lossMask, [BATCH, SEQ]);
    const advantages = f32(IO.advantages, [BATCH, SEQ]);
    const oldLogprobs = f32(IO.oldLogprobs, [BATCH, SEQ]);
    const kl = config.kl ?? null;
    const refLogprobs = kl === null ? undefined : f32(IO.refLogprobs, [BATCH, SEQ]);
    // A loss micro-batch weighs each row by its own micro-batch's denominator, [batch, 1].
    const lossDenominator = config.lossMicroBatch === undefined
      ? f32(IO.lossDenominator)
      : unsqueeze(f32(IO.rowDenominators, [BATCH]), [1]);
    const tokenCount = f32(IO.tokenCount);
    const clipLow = f32(IO.clipLow);
    const clipHigh = f32(IO.clipHigh);
    const klCoef = f32(IO.klCoef);
    const temperature = f32(IO.temperature);
    const dropoutMasks: Record<string, Value> = {};
    for (const m of config.dropoutMasks ?? []) {
      dropoutMasks[m.name] = f32(IO.dropoutMask(m.name), [BATCH, SEQ, m.width]);
    }
    const logits = config.policy({ params, tokens, attentionMask, dropoutMasks });
    checkLogits(logits);
    const objective = policyObjective(
      {
        logits,
        targets,
        lossMask,
        advantages,
        oldLogprobs,
        refLogprobs,
        lossDenominator,
        tokenCount,
        clipLow,
        clipHigh,
        klCoef,
        temperature,
      },
      config,
    );
    grads = gradients(g, objective.loss, trainable.map((name) => params[name]));
    publish(objective.loss, IO.loss);
    publish(objective.policyLoss, IO.policyLoss);
    publish(objective.klLoss, IO.klLoss);
    publish(objective.clipFraction, IO.clipFraction);
    publish(objective.approxKl, IO.approxKl);
    publish(objective.entropy, IO.entropy);
    if (objective.maxRatio) publish(objective.maxRatio, IO.maxRatio);
    if (objective.dualClipFraction) publish(objective.dualClipFraction, IO.dualClipFraction);
    if (objective.klClampFraction) publish(objective.klClampFraction, IO.klClampFraction);
  }

  const normOrder = config.gradNorm ?? "per-tensor";
  if (kind === "accumulate") {
    const keep = greater(f32(IO.accumulate), 0);
    const fresh = sums.map((sum) =>
      stackRows(sum.params.map((name) => grads[trainable.indexOf(name)]))
    );
    publish(globalNorm(normOrder === "stacked" ? fresh : grads), IO.gradNorm);
    sums.forEach((sum, k) => {
      g.output(where(keep, add(f32(sum.name, sum.shape), fresh[k]), fresh[k]), sum.next);
      bindings.push({ state: sum.name, output: sum.next });
    });
  } else {
    const step = f32(IO.adamStep);
    const result = optimizerStep(
      trainable.map((name, i) => ({
        param: params[name],
        grad: grads[i],
        m: f32(IO.adamM(name), params[name].shape),
        v: f32(IO.adamV(name), params[name].shape),
      })),
      { step, lr: f32(IO.lr), weightDecay: f32(IO.weightDecay), maxGradNorm: f32(IO.maxGradNorm) },
      config.adam,
      stackedGrads,
      normOrder,
    );
    trainable.forEach((name, i) => {
      const next = result.slots[i];
      g.output(next.param, IO.paramNext(name));
      g.output(next.m, IO.adamMNext(name));
      g.output(next.v, IO.adamVNext(name));
      bindings.push(
        { state: IO.param(name), output: IO.paramNext(name) },
        { state: IO.adamM(name), output: IO.adamMNext(name) },
        { state: IO.adamV(name), output: IO.adamVNext(name) },
      );
    });
    g.output(result.stepNext, IO.adamStepNext);
    bindings.push({ state: IO.adamStep, output: IO.adamStepNext });
    publish(result.gradNorm, IO.gradNorm);
    publish(result.skipped, IO.skipped);
    // The host learns the count from this run's outputs, not from a second read of the state.
    publish(result.stepNext, IO.appliedSteps);
  }
  return finish(kind, g, constants, bindings, metrics, sums);
}

/**
 * The gradient sums of the trainable parameters: one per group of `rowGroups`, in its order
 * (the order `optimizerStep` groups them in).
 */
function gradientSums(config: TrainStepConfig, trainable: readonly string[]): GradientSum[] {
  const specs = trainable.map((name) => config.params.find((p) => p.name === name)!);
  return rowGroups(specs.map((p) => ({ dtype: "float32", shape: p.shape }))).map((group, k) => {
    const members = group.map((i) => specs[i]);
    const rows = members.reduce((n, p) => n + p.shape[0], 0);
    return Object.freeze({
      name: IO.gradSum(k),
      next: IO.gradSumNext(k),
      shape: Object.freeze([rows, ...members[0].shape.slice(1)]),
      params: Object.freeze(members.map((p) => p.name)),
    });
  });
}

/** Serializes a built graph with the state bindings and metrics the runner needs. */
function finish(
  kind: TrainStepKind,
  g: Graph,
  constants: TrainStepConstants,
  bindings: { state: string; output: string }[],
  metrics: string[],
  gradientSums: readonly GradientSum[],
): TrainStepGraph {
  const constantBytes = g.initializers.reduce((n, i) => n + i.tensor.data.byteLength, 0);
  const external = constantBytes >= (constants.externalFromBytes ?? EXTERNAL_FROM_BYTES)
    ? toOnnxModelWithExternalData(g, { location: CONSTANTS_FILE })
    : null;
  return Object.freeze({
    kind,
    graph: g,
    model: external?.model ?? toOnnxModel(g),
    ...(external ? { externalData: { location: external.location, data: external.data } } : {}),
    stateBindings: Object.freeze(bindings),
    metrics: Object.freeze(metrics),
    gradientSums: Object.freeze(gradientSums),
  });
}

function checkLogits(logits: Value): void {
  const [b, s] = logits.shape;
  if (logits.shape.length !== 3 || b !== BATCH || s !== SEQ || logits.dtype !== "float32") {
    throw new TrainStepError(
      `policy must return float32 logits [${BATCH},${SEQ},vocab], got ${logits.dtype} ` +
        `[${logits.shape}]`,
    );
  }
}
