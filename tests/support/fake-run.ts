/**
 * The test suites' one fake-run generator: the events of a synthetic but schema-valid training
 * run, drawn from a seed and shaped as engine/trainer writes them: config and policies; per step
 * the worker groups' placement, turns, trajectories, trajectory and agent rewards, advantages with
 * their baseline statistics, PPO updates with per-agent gradient norms; evaluation rollouts and
 * results; the final checkpoint and completion. Analysis tests recompute expected figures from the
 * very objects it yields; dashboard tests and the benchmarks fill real stores with it.
 */
import { evenChunks } from "../../engine/trainer/worker-group-update.ts";
import {
  advantagesEvent,
  rewardEvent,
  trajectoryId,
} from "../../engine/trainer/run-log/run-events.ts";
import {
  baselineStatistics,
  type GroupTrajectory,
  lemmaMultiplier,
  reinforcePlusPlusAdvantages,
} from "../../engine/advantages/mod.ts";
import { type EventStore, hashConfig, type NewEvent, sha256Hex } from "../../events/mod.ts";
import { mulberry32 } from "./mulberry32.ts";

/** One agent of a fake run, in turn order. */
export interface FakeAgent {
  readonly name: string;
  readonly role: string;
  readonly wg: string;
  /**
   * Probability that the agent acts in a trajectory (default 1; the first agent always acts).
   * An agent that sits some trajectories out has its own reward statistics, so its Lemma 4.2
   * multiplier differs from 1.
   */
  readonly acts?: number;
  /** The agent's reward from its trajectory's 0/1 reward (default the same reward). */
  readonly credit?: (trajectoryReward: number) => number;
}

/** Shape of a generated run. */
export interface FakeRunSpec {
  readonly runId: string;
  /**
   * As recorded. "dr-mas" normalizes each agent's rewards by its own statistics, the others by
   * the group's; "mada" records no Lemma 4.2 multiplier, as the engine's MADA-RL credit;
   * "reinforce++" records batch-scope statistics over each step's whole batch (the engine's
   * REINFORCE++-baseline, token-weighted by each turn's response tokens).
   */
  readonly estimator: string;
  /** The sigma convention of the recorded baselines (default population). */
  readonly sigma?: "population" | "unbiased";
  readonly seed: number;
  readonly steps: number;
  /** First step to write (default 0): a test appends a running run's later steps with it. */
  readonly fromStep?: number;
  /** Append the final checkpoint and run.completed after the last step (default true). */
  readonly complete?: boolean;
  readonly prompts: number;
  readonly groupSize: number;
  /** Agents in turn order. A name may repeat (a critic answering in several debate rounds). */
  readonly agents: readonly FakeAgent[];
  /** Probability that a turn's answer is right (per step if a function). */
  readonly accuracy: number | ((step: number) => number);
  /** Benchmarks evaluated, with problems each and k samples per problem. */
  readonly benchmarks: readonly string[];
  readonly evalProblems: number;
  readonly k: number;
  /** Evaluate after every this many steps as well as after the last (default 0: the last only). */
  readonly evalEvery?: number;
  /** Gradient norm of worker group `wg` at `step` (default a noisy constant; NaN is skipped). */
  readonly gradNorm?: (step: number, wg: string, rand: () => number) => number;
  /**
   * PPO updates per step and worker group (default 1 epoch of 1 mini-batch): each epoch shuffles
   * the group's turns and splits them into `miniBatches` parts, one `gradient_step.applied` per
   * part with `update = epoch * miniBatches + miniBatch`, as engine/trainer does.
   */
  readonly updates?: { readonly epochs: number; readonly miniBatches: number };
}

/** One rollout turn as an update's `rows` name it. */
interface TurnRef {
  readonly prompt: number;
  readonly sample: number;
  readonly turn: number;
}

/** A seeded Fisher-Yates shuffle of a copy of `xs`. */
function shuffled<T>(xs: readonly T[], rand: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const hash = (s: string) => sha256Hex(new TextEncoder().encode(s));

/** The runtime a fake `run.started` records: one CPU thread, no ONNX Runtime. */
export const FAKE_RUNTIME = Object.freeze({
  deno: "2.9.6",
  v8: "test",
  typescript: "test",
  onnxruntime: null,
  executionProvider: "cpu",
  adapter: null,
  threads: 1,
  os: "linux",
  arch: "x86_64",
});

/** The config a generated run starts with. */
export function fakeRunConfig(spec: FakeRunSpec): Record<string, unknown> {
  return {
    estimator: spec.estimator,
    workflow: spec.agents.some((a) => a.role === "critic") ? "debate" : "single",
    seed: spec.seed,
    model: { name: "tiny-test" },
    agents: [...new Map(spec.agents.map((a) => [a.name, a])).values()].map((a) => ({
      name: a.name,
      role: a.role,
      workerGroup: a.wg,
    })),
    optimizer: { lr: 1e-6, clip: 1 },
  };
}

/**
 * Yields a run's events in log order, in batches of at most `batch` events (append units).
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../events/mod.ts";
 * import { fakeRunEvents, type FakeRunSpec } from "./fake-run.ts";
 *
 * declare const store: EventStore;
 * declare const spec: FakeRunSpec;
 * for (const events of fakeRunEvents(spec)) await store.append(spec.runId, events);
 * ```
 */
export function* fakeRunEvents(spec: FakeRunSpec, batch = 2000): Generator<NewEvent[]> {
  const fromStep = spec.fromStep ?? 0;
  const complete = spec.complete ?? true;
  const rand = mulberry32(spec.seed * 7919 + spec.estimator.length + fromStep);
  const accuracyAt = (step: number) =>
    typeof spec.accuracy === "number" ? spec.accuracy : spec.accuracy(step);
  const wgs = [...new Set(spec.agents.map((a) => a.wg))];
  const agentsOf = (wg: string) => [
    ...new Set(spec.agents.filter((a) => a.wg === wg).map((a) => a.name)),
  ];
  let out: NewEvent[] = [];
  const emit = function* (e: NewEvent) {
    out.push(e);
    if (out.length >= batch) {
      yield out;
      out = [];
    }
  };
  // One trajectory's turns and completion; returns its 0/1 reward, the agents that acted and
  // each turn's response tokens.
  const rollOut = function* (
    phase: "rollout" | "eval",
    step: number,
    prompt: number,
    sample: number,
  ): Generator<NewEvent[], { total: number; active: FakeAgent[]; tokens: number[] }> {
    const trajectory = trajectoryId(phase, step, prompt, sample);
    let finalAnswer: string | null = null;
    const tokens: number[] = [];
    const active = spec.agents.filter((a, i) => i === 0 || rand() < (a.acts ?? 1));
    for (const [turn, agent] of active.entries()) {
      const parsedAnswer = rand() < accuracyAt(step) ? "42" : rand() < 0.25 ? null : "41";
      finalAnswer = parsedAnswer;
      const n = 2 + Math.floor(rand() * 4);
      tokens.push(n);
      yield* emit({
        type: "turn.generated",
        data: {
          step,
          phase,
          trajectory,
          prompt,
          sample,
          turn,
          agent: agent.name,
          role: agent.role,
          workerGroup: agent.wg,
          promptTokens: new Int32Array(3 + turn),
          responseTokens: new Int32Array(n).fill(7),
          logprobs: new Float32Array(n).fill(-0.5),
          finishReason: "stop",
          parsedAnswer,
          correct: parsedAnswer === null ? null : parsedAnswer === "42",
          text: `${agent.name} says ${parsedAnswer ?? "nothing"}`,
        },
      });
    }
    const correct = finalAnswer === "42";
    yield* emit({
      type: "trajectory.completed",
      data: {
        step,
        phase,
        trajectory,
        prompt,
        sample,
        problemId: `p${prompt}`,
        question: `What is 6 * 7? (p${prompt})`,
        gold: "42",
        turns: active.length,
        agents: active.map((a) => a.name),
        finalAnswer,
        correct,
        tokens: 10 * active.length,
        terminationReason: "answered",
      },
    });
    return { total: correct ? 1 : 0, active, tokens };
  };
  // One optimizer update; the step's last one leaves the parameters the checkpoint names.
  const gradientStep = function* (u: {
    step: number;
    wg: string;
    update: number;
    epoch: number;
    miniBatch: number;
    rows: readonly TurnRef[];
    last: boolean;
  }) {
    const norm = spec.gradNorm ? spec.gradNorm(u.step, u.wg, rand) : 1 + rand();
    const skipped = !Number.isFinite(norm);
    const agents = agentsOf(u.wg);
    yield* emit({
      type: "gradient_step.applied",
      data: {
        step: u.step,
        workerGroup: u.wg,
        update: u.update,
        epoch: u.epoch,
        miniBatch: u.miniBatch,
        rows: u.rows.map((r) => ({ ...r })),
        agents,
        losses: { policy: -0.1, kl: 0.01, total: -0.09 },
        gradNormBeforeClip: norm,
        gradNormAfterClip: skipped ? 0 : Math.min(norm, 1),
        // A shared group's agents as orthogonal parts of equal size: squares sum to the norm's.
        agentGradNorms: Object.fromEntries(agents.map((a) => [a, norm / Math.sqrt(agents.length)])),
        clipFraction: 0.1,
        kl: 0.01,
        entropy: 1.5,
        lr: 1e-6,
        clipLow: 0.2,
        clipHigh: 0.28,
        temperature: 1,
        loraDropout: 0,
        oldLogprobs: u.update === 0 && u.last ? "rollout" : "recompute",
        oldLogprobDrift: u.update === 0 && u.last ? null : 0.01 * (u.step + 1),
        tokens: 100,
        skippedNonFinite: skipped,
        parameterHash: hash(`${spec.runId}/${u.wg}/${u.step}${u.last ? "" : `/${u.update}`}`),
      },
    });
  };
  // Every worker group loaded for the step's work, then offloaded, in a fixed order; seq orders
  // a group's moves within the step (its load 0, its offload 1).
  const placement = function* (
    type: "worker_group.loaded" | "worker_group.offloaded",
    step: number,
  ) {
    const seq = type === "worker_group.loaded" ? 0 : 1;
    for (const wg of wgs) {
      yield* emit({ type, data: { step, workerGroup: wg, seq, device: "gpu:0", bytes: 4096 } });
    }
  };
  const evaluate = function* (step: number) {
    for (let prompt = 0; prompt < spec.prompts; prompt++) {
      for (let sample = 0; sample < spec.groupSize; sample++) {
        yield* rollOut("eval", step, prompt, sample);
      }
    }
    for (const benchmark of spec.benchmarks) {
      const problems = Array.from({ length: spec.evalProblems }, (_, i) => {
        let c = 0;
        for (let j = 0; j < spec.k; j++) if (rand() < accuracyAt(step)) c++;
        return { problemId: `${benchmark}/${i}`, n: spec.k, c };
      });
      yield* emit({
        type: "evaluation.completed",
        data: {
          step,
          benchmark,
          samplesPerProblem: spec.k,
          problems,
          metrics: {
            [`avg@${spec.k}`]: problems.reduce((s, p) => s + p.c / p.n, 0) / problems.length,
          },
        },
      });
    }
  };
  if (fromStep === 0) {
    const config = fakeRunConfig(spec);
    yield* emit({
      type: "run.started",
      data: {
        config,
        configHash: hashConfig(config),
        seed: spec.seed,
        codeVersion: "fake-run",
        runtime: FAKE_RUNTIME,
      },
    });
    for (const wg of wgs) {
      yield* emit({
        type: "policy.initialized",
        data: {
          workerGroup: wg,
          agents: agentsOf(wg),
          model: "tiny-test",
          source: "random",
          parameterCount: 1_000_000,
          trainableParameterCount: 10_000,
          parameterHash: hash(`${spec.runId}/${wg}`),
          blob: null,
        },
      });
    }
  }
  const sigma = spec.sigma ?? "population";
  const eps = 1e-6;
  for (let step = fromStep; step < spec.steps; step++) {
    yield* emit({
      type: "step.started",
      data: {
        step,
        groupSize: spec.groupSize,
        prompts: Array.from(
          { length: spec.prompts },
          (_, p) => ({ prompt: p, problemId: `p${p}` }),
        ),
      },
    });
    yield* placement("worker_group.loaded", step);
    // Per worker group, the step's turns in prompt, sample and turn order (engine/trainer's).
    const wgTurns = new Map<string, TurnRef[]>(wgs.map((wg) => [wg, []]));
    // Batch scope: every prompt group of the step, whitened together once all have rolled out.
    const batchGroups: GroupTrajectory[][] = [];
    for (let prompt = 0; prompt < spec.prompts; prompt++) {
      const rewards: number[] = [];
      const perAgent = new Map<string, number[]>();
      const actions: { sample: number; agent: string; turn: number; reward: number }[] = [];
      const group: GroupTrajectory[] = [];
      for (let sample = 0; sample < spec.groupSize; sample++) {
        const { total, active, tokens } = yield* rollOut("rollout", step, prompt, sample);
        const credits = new Map(active.map((a) => [a.name, a.credit?.(total) ?? total]));
        active.forEach((agent, turn) => {
          actions.push({ sample, agent: agent.name, turn, reward: credits.get(agent.name)! });
          wgTurns.get(agent.wg)!.push({ prompt, sample, turn });
        });
        group.push({
          sample,
          reward: total,
          actions: active.map((a, turn) => ({ agent: a.name, turn, tokens: tokens[turn] })),
        });
        rewards.push(total);
        yield* emit(rewardEvent("rollout", step, prompt, sample, null, { acc: total }, total));
        for (const [agent, r] of credits) {
          perAgent.set(agent, [...(perAgent.get(agent) ?? []), r]);
          yield* emit(rewardEvent("rollout", step, prompt, sample, agent, { reward: r }, r));
        }
      }
      if (spec.estimator === "reinforce++") {
        batchGroups.push(group);
        continue;
      }
      // Statistics and multiplier as the engine records them (engine/advantages).
      const g = baselineStatistics(rewards, sigma);
      const stats = new Map(
        [...perAgent].map(([a, xs]) => [a, {
          ...baselineStatistics(xs, sigma),
          multiplier: spec.estimator === "mada" ? null : lemmaMultiplier(xs, rewards),
        }]),
      );
      yield* emit({
        type: "advantages.computed",
        data: {
          step,
          prompt,
          estimator: spec.estimator,
          scope: spec.estimator === "mada" ? "role" : "group",
          sigmaConvention: sigma,
          eps,
          baseline: { global: g, perAgent: Object.fromEntries(stats), batch: null },
          advantages: actions.map((a) => {
            const score = rewards[a.sample];
            const own = stats.get(a.agent)!;
            return {
              trajectory: trajectoryId("rollout", step, prompt, a.sample),
              sample: a.sample,
              agent: a.agent,
              turn: a.turn,
              reward: a.reward,
              score,
              advantage: spec.estimator === "dr-mas"
                ? (a.reward - own.mu) / (own.sigma + eps)
                : (score - g.mu) / (g.sigma + eps),
            };
          }),
        },
      });
    }
    if (batchGroups.length > 0) {
      // REINFORCE++-baseline as the engine computes it: one batch whitening for the step.
      const perPrompt = reinforcePlusPlusAdvantages(batchGroups, { sigma, eps });
      for (const [prompt, g] of perPrompt.entries()) yield* emit(advantagesEvent(step, prompt, g));
    }
    const { epochs, miniBatches } = spec.updates ?? { epochs: 1, miniBatches: 1 };
    for (const wg of wgs) {
      const turns = wgTurns.get(wg)!;
      // At least one update, also for a group none of whose agents acted this step.
      const parts = Math.max(1, Math.min(miniBatches, turns.length));
      for (let epoch = 0; epoch < epochs; epoch++) {
        // One part is the whole batch in step order, without a draw (as the engine).
        const order = parts === 1 ? turns : shuffled(turns, rand);
        for (const [miniBatch, rows] of evenChunks(order, parts).entries()) {
          const update = epoch * parts + miniBatch;
          const last = update === epochs * parts - 1;
          yield* gradientStep({ step, wg, update, epoch, miniBatch, rows, last });
        }
      }
    }
    yield* placement("worker_group.offloaded", step);
    const lastStep = step === spec.steps - 1;
    if (lastStep && complete) {
      for (const wg of wgs) {
        yield* emit({
          type: "checkpoint.saved",
          data: {
            step,
            workerGroup: wg,
            blob: hash(`blob/${spec.runId}/${wg}`),
            bytes: 4096,
            parameterHash: hash(`${spec.runId}/${wg}/${step}`),
            optimizerBlob: null,
            format: "safetensors",
          },
        });
      }
    }
    const every = spec.evalEvery ?? 0;
    if (lastStep || (every > 0 && (step + 1) % every === 0)) yield* evaluate(step);
  }
  if (complete) {
    yield* emit({ type: "run.completed", data: { steps: spec.steps, metrics: {} } });
  }
  if (out.length > 0) yield out;
}

/**
 * Appends a generated run to a store; returns every event it appended, in order.
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../events/mod.ts";
 * import { type FakeRunSpec, writeFakeRun } from "./fake-run.ts";
 *
 * declare const store: EventStore;
 * declare const spec: FakeRunSpec;
 * const events = await writeFakeRun(store, spec);
 * ```
 */
export async function writeFakeRun(store: EventStore, spec: FakeRunSpec): Promise<NewEvent[]> {
  const all: NewEvent[] = [];
  for (const events of fakeRunEvents(spec)) {
    await store.append(spec.runId, events);
    all.push(...events);
  }
  return all;
}
