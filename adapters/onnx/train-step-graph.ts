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
import { globalNorm, optimizerStep } from "./optim/mod.ts";
import { add, gradients, Graph, greater, toOnnxModel, type Value, where } from "./mod.ts";
import { policyObjective, targetLogprobs, temperedLogSoftmax } from "./train-step-loss.ts";
import { IO, trainableNames, type TrainStepConfig, TrainStepError } from "./train-step-spec.ts";

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
  /** Output -> state input pairs (parameters, moments, accumulators, step counter). */
  readonly stateBindings: readonly { readonly state: string; readonly output: string }[];
  /** Scalar outputs returned to the host. */
  readonly metrics: readonly string[];
}

const BATCH = "batch";
const SEQ = "seq";

/**
 * Builds one train-step graph.
 *
 * @example
 * const fused = buildTrainStep(config, "fused");
 * const session = await runtime.load(fused.model, {
 *   keepOnDevice: fused.stateBindings.map((b) => b.output),
 * });
 */
export function buildTrainStep(config: TrainStepConfig, kind: TrainStepKind): TrainStepGraph {
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
  for (const p of specs) params[p.name] = g.input(IO.param(p.name), p.dtype ?? "float32", p.shape);

  if (kind === "logprobs") {
    const tokens = g.input(IO.tokens, "int32", [BATCH, SEQ]);
    const targets = g.input(IO.targets, "int32", [BATCH, SEQ]);
    const attentionMask = f32(IO.attentionMask, [BATCH, SEQ]);
    const logits = config.policy({ params, tokens, attentionMask });
    checkLogits(logits);
    g.output(targetLogprobs(temperedLogSoftmax(logits, f32(IO.temperature)), targets), IO.logprobs);
    return finish(kind, g, bindings, metrics);
  }

  let grads: Value[];
  if (kind === "apply") {
    grads = trainable.map((name) => f32(IO.gradAcc(name), params[name].shape));
  } else {
    const tokens = g.input(IO.tokens, "int32", [BATCH, SEQ]);
    const targets = g.input(IO.targets, "int32", [BATCH, SEQ]);
    const attentionMask = f32(IO.attentionMask, [BATCH, SEQ]);
    const lossMask = f32(IO.lossMask, [BATCH, SEQ]);
    const advantages = f32(IO.advantages, [BATCH, SEQ]);
    const oldLogprobs = f32(IO.oldLogprobs, [BATCH, SEQ]);
    const kl = config.kl ?? null;
    const refLogprobs = kl === null ? undefined : f32(IO.refLogprobs, [BATCH, SEQ]);
    const lossDenominator = f32(IO.lossDenominator);
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
      config.aggregation ?? "token-mean",
      kl,
      config.objective,
    );
    grads = gradients(g, objective.loss, trainable.map((name) => params[name]));
    publish(objective.loss, IO.loss);
    publish(objective.policyLoss, IO.policyLoss);
    publish(objective.klLoss, IO.klLoss);
    publish(objective.clipFraction, IO.clipFraction);
    publish(objective.approxKl, IO.approxKl);
    publish(objective.entropy, IO.entropy);
  }

  if (kind === "accumulate") {
    publish(globalNorm(grads), IO.gradNorm);
    const keep = greater(f32(IO.accumulate), 0);
    trainable.forEach((name, i) => {
      const acc = f32(IO.gradAcc(name), params[name].shape);
      g.output(where(keep, add(acc, grads[i]), grads[i]), IO.gradAccNext(name));
      bindings.push({ state: IO.gradAcc(name), output: IO.gradAccNext(name) });
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
  return finish(kind, g, bindings, metrics);
}

/** Serializes a built graph with the state bindings and metrics the runner needs. */
function finish(
  kind: TrainStepKind,
  g: Graph,
  bindings: { state: string; output: string }[],
  metrics: string[],
): TrainStepGraph {
  return Object.freeze({
    kind,
    graph: g,
    model: toOnnxModel(g),
    stateBindings: Object.freeze(bindings),
    metrics: Object.freeze(metrics),
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
