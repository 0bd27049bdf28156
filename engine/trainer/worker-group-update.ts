/**
 * The update phase of a step for one worker group (Dr. MAS per-worker-group updates), PPO-style:
 * the group's turns are split into `updates.mini_batches` parts by a seeded shuffle and passed
 * over `updates.epochs` times, one optimizer step per part, each its own `gradient_step.applied`.
 * Old logprobs are recomputed with the update's own forward first (veRL's actor
 * `compute_log_prob` before `update_policy`), so the first update's ratio is exactly 1 and later
 * ones measure how far the policy moved. Turns sampled by an inference server (rollout.backend
 * openai) are compared with the recomputed logprobs, and their policy loss corrected by truncated
 * importance sampling (engine/trainer/rollout-correction.ts).
 */
import type { NewEvent } from "../../events/mod.ts";
import { logprobTemperature, type TrainStepMetrics } from "../../adapters/onnx/train-step/mod.ts";
import type { GroupAdvantages } from "../advantages/mod.ts";
import type { NormalizedConfig } from "../config/mod.ts";
import { randomStream, shuffle } from "../random/mod.ts";
import { learningRate } from "./lr-schedule.ts";
import { policyBatch, responseValues, type TrainingTurn } from "./policy-batch.ts";
import type { GroupPolicy, Rollout } from "./rollout/mod.ts";
import { rolloutCorrection, type RolloutMismatch } from "./rollout-correction.ts";

/** A turn to train on, with its place in the step. */
export interface StepTurn extends TrainingTurn {
  readonly prompt: number;
  readonly sample: number;
  readonly turn: number;
}

/**
 * Every turn of the step that produced tokens, with its advantage, per worker group, in prompt,
 * sample and turn order.
 */
export function trainingTurns(
  rollouts: readonly Rollout[],
  advantages: readonly GroupAdvantages[],
): Map<string, StepTurn[]> {
  const byGroup = new Map<string, StepTurn[]>();
  rollouts.forEach(({ episodes }, prompt) => {
    for (const a of advantages[prompt].actions) {
      const record = episodes[a.sample].turns.find((t) => t.turn === a.turn)!.output.extra;
      if (record.responseTokens.length === 0) continue;
      const list = byGroup.get(record.workerGroup) ?? [];
      list.push({
        prompt,
        sample: a.sample,
        turn: a.turn,
        agent: a.agent,
        promptTokens: record.promptTokens,
        responseTokens: record.responseTokens,
        logprobs: record.logprobs,
        advantage: a.advantage,
      });
      byGroup.set(record.workerGroup, list);
    }
  });
  return byGroup;
}

/**
 * `rows` split into `parts` contiguous chunks whose sizes differ by at most one, the larger first.
 *
 * @example
 * ```ts
 * import { evenChunks } from "./worker-group-update.ts";
 *
 * evenChunks([1, 2, 3, 4, 5], 2); // [[1, 2, 3], [4, 5]]
 * ```
 */
export function evenChunks<T>(rows: readonly T[], parts: number): T[][] {
  const out: T[][] = [];
  let at = 0;
  for (let p = 0; p < parts; p++) {
    const size = Math.floor(rows.length / parts) + (p < rows.length % parts ? 1 : 0);
    out.push(rows.slice(at, at + size));
    at += size;
  }
  return out;
}

/**
 * Runs every update of `policy` at `step` on `turns` and returns their events.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../config/mod.ts";
 * import type { GroupPolicy } from "./rollout/mod.ts";
 * import { type StepTurn, updateWorkerGroup } from "./worker-group-update.ts";
 *
 * declare const config: NormalizedConfig;
 * declare const policy: GroupPolicy;
 * declare const turns: Map<string, StepTurn[]>; // trainingTurns(rollouts, advantages)
 * const events = await updateWorkerGroup(config, policy, 3, turns.get(policy.id)!);
 * events.length; // epochs x min(mini_batches, turns): one gradient_step.applied per update
 * ```
 */
export async function updateWorkerGroup(
  config: NormalizedConfig,
  policy: GroupPolicy,
  step: number,
  turns: readonly StepTurn[],
): Promise<NewEvent[]> {
  const wg = config.worker_groups.find((g) => g.id === policy.id)!;
  const temperature = logprobTemperature(config.sampling.temperature);
  const hyper = {
    lr: learningRate(wg.optimizer, step, config.steps),
    clipLow: config.loss.clip_eps_low,
    clipHigh: config.loss.clip_eps_high,
    klCoef: config.loss.kl_coef,
    weightDecay: wg.optimizer.weight_decay,
    maxGradNorm: wg.optimizer.max_grad_norm,
    temperature,
  };
  let rows = turns;
  let drift: number | null = null;
  let mismatch: RolloutMismatch | undefined;
  if (config.updates.old_logprobs === "recompute") {
    const whole = policyBatch(turns);
    const current = responseValues(whole, turns, await policy.logprobs(whole, temperature));
    drift = 0;
    turns.forEach((t, i) => {
      for (let j = 0; j < t.logprobs.length; j++) {
        drift = Math.max(drift!, Math.abs(current[i][j] - t.logprobs[j]));
      }
    });
    rows = turns.map((t, i) => ({ ...t, logprobs: current[i] }));
    if (config.rollout?.backend === "openai") {
      // The turns' logprobs are the server's: correct for its mismatch with the trainer's graph.
      const cap = config.rollout.tis_cap;
      const correction = rolloutCorrection(current, turns.map((t) => t.logprobs), cap);
      mismatch = correction.mismatch;
      if (cap > 0) {
        rows = rows.map((t, i) => ({ ...t, advantageWeights: correction.weights[i] }));
      }
    }
  }
  const parts = Math.min(config.updates.mini_batches, rows.length);
  const events: NewEvent[] = [];
  for (let epoch = 0; epoch < config.updates.epochs; epoch++) {
    // One part is the whole batch in step order: no draw, the same batch as without mini-batches.
    const order = parts === 1 ? rows : shuffle(
      randomStream({ seed: config.seed, purpose: `mini-batch-split:${epoch}`, step, wg: wg.id }),
      rows,
    );
    for (const [miniBatch, chunk] of evenChunks(order, parts).entries()) {
      const update = epoch * parts + miniBatch;
      // A shared group's rows go agent by agent, so each agent's share of the gradient is one
      // consecutive part of the batch: its norm comes with the update, at no extra pass.
      const byAgent = policy.agents.map((agent) => chunk.filter((t) => t.agent === agent));
      const part = byAgent.flat();
      const plain = policyBatch(part);
      const batch = config.loss.kl_coef > 0
        ? { ...plain, refLogprobs: await policy.referenceLogprobs(plain, temperature) }
        : plain;
      const key = { step, update };
      const present = byAgent.flatMap((rows, i) => rows.length > 0 ? [i] : []);
      let m: TrainStepMetrics;
      let norms: readonly number[];
      if (policy.agents.length === 1) {
        m = await policy.update(batch, hyper, key);
        norms = [m.gradNorm];
      } else {
        const parted = await policy.updateInParts(
          batch,
          hyper,
          present.map((i) => byAgent[i].length),
          key,
        );
        m = parted;
        norms = parted.partGradNorms;
      }
      const agentGradNorms: Record<string, number> = Object.fromEntries(
        policy.agents.map((agent) => [agent, 0]),
      );
      present.forEach((i, j) => agentGradNorms[policy.agents[i]] = norms[j]);
      events.push({
        type: "gradient_step.applied",
        data: {
          step,
          workerGroup: policy.id,
          update,
          epoch,
          miniBatch,
          rows: part.map((t) => ({ prompt: t.prompt, sample: t.sample, turn: t.turn })),
          agents: [...policy.agents],
          losses: { total: m.loss, policy: m.policyLoss, kl: m.klLoss },
          gradNormBeforeClip: m.gradNorm,
          gradNormAfterClip: m.skipped ? 0 : Math.min(m.gradNorm, hyper.maxGradNorm),
          agentGradNorms,
          clipFraction: m.clipFraction,
          kl: m.approxKl,
          entropy: m.entropy,
          lr: hyper.lr,
          clipLow: hyper.clipLow,
          clipHigh: hyper.clipHigh,
          temperature,
          loraDropout: policy.loraDropout,
          oldLogprobs: config.updates.old_logprobs,
          oldLogprobDrift: drift,
          ...(mismatch ? { rolloutMismatch: mismatch } : {}),
          // Present only where the loss computes them (TrainStepMetrics), so runs recorded
          // before them replay with the same fields.
          ...(m.maxRatio !== undefined ? { maxRatio: m.maxRatio } : {}),
          ...(m.dualClipFraction !== undefined ? { dualClipFraction: m.dualClipFraction } : {}),
          ...(m.klClampFraction !== undefined ? { klClampFraction: m.klClampFraction } : {}),
          tokens: m.lossTokens,
          skippedNonFinite: m.skipped,
          parameterHash: await policy.parameterHash(),
        },
      });
    }
  }
  return events;
}
