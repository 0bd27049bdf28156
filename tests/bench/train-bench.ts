/**
 * `deno task bench train`: one smoke-scale training run (refine, random-init embedded
 * architecture, cpu) with the store's appends timed, to report the share of a training step's
 * wall time that recording the events costs (target under 2%); and the cost of a shared worker
 * group's update (two agents, each agent's gradient norm measured) against a separate group's on
 * the same rows (target within 1.2x).
 */
import { join } from "node:path";
import { initEmbeddedModel, saveEmbeddedModel } from "../../adapters/model/mod.ts";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { mergeConfig, parseConfig, presetInput } from "../../engine/config/mod.ts";
import { fillNormal, randomStream } from "../../engine/random/mod.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import { openPolicyPool } from "../../engine/trainer/rollout/policy-pool.ts";
import { policyBatch } from "../../engine/trainer/policy-batch.ts";
import { mulberry32 } from "../support/mulberry32.ts";
import { type EventStore, type NewEvent, openStore } from "../../events/mod.ts";

/** Runs the suite. */
export async function run(): Promise<void> {
  await recordingShare();
  await sharedUpdateCost();
}

/** Median wall time of `n` calls of `f`, in ms. */
async function medianMs(n: number, f: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await f();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[Math.floor(n / 2)];
}

/**
 * The embedded model's refine agents as one shared worker group and as separate ones, updated on
 * the same 32 rows (prompt 96 + response 40 tokens): the shared update measures both agents'
 * gradient norms on the way (stepInParts), the separate one is a plain fused step.
 */
async function sharedUpdateCost(): Promise<void> {
  const runtime = await openRuntime("cpu", { threads: 2 });
  const rand = mulberry32(11);
  const rows = Array.from({ length: 32 }, (_, i) => ({
    agent: i < 16 ? "solver" : "verifier",
    promptTokens: Int32Array.from({ length: 96 }, () => 3 + Math.floor(rand() * 250)),
    responseTokens: Int32Array.from({ length: 40 }, () => 3 + Math.floor(rand() * 250)),
    logprobs: Float32Array.from({ length: 40 }, () => -1 - rand()),
    advantage: rand() * 2 - 1,
  }));
  const batch = policyBatch(rows);
  const hyper = {
    lr: 1e-4,
    clipLow: 0.2,
    clipHigh: 0.2,
    klCoef: 0,
    weightDecay: 0,
    maxGradNorm: 1,
    temperature: 1,
  };
  const pools = await Promise.all(
    (["shared", "separate"] as const).map((agent_to_wg) =>
      openPolicyPool(
        runtime,
        parseConfig(mergeConfig(presetInput("refine-drmas"), { agent_to_wg })).worker_groups,
        { seed: 0, klCoef: 0, aggregation: "token-mean", aggregationConstant: 48 },
      )
    ),
  );
  try {
    const shared = [...pools[0].groups.values()][0];
    const separate = pools[1].groups.get("solver")!;
    let update = 0;
    const key = () => ({ step: 0, update: update++ });
    // Warm both (graph loads), then alternate so that machine noise hits both alike.
    await shared.updateInParts(batch, hyper, [16, 16], key());
    await separate.update(batch, hyper, key());
    let sharedMs = 0;
    let separateMs = 0;
    for (let round = 0; round < 3; round++) {
      sharedMs += await medianMs(3, () => shared.updateInParts(batch, hyper, [16, 16], key()));
      separateMs += await medianMs(3, () => separate.update(batch, hyper, key()));
    }
    console.log(
      `update on 32 rows: shared group (2 agents, per-agent norms) ${
        (sharedMs / 3).toFixed(0)
      } ms, ` +
        `separate group ${(separateMs / 3).toFixed(0)} ms; ratio ${
          (sharedMs / separateMs).toFixed(2)
        }x` +
        " (target <= 1.2x)",
    );
  } finally {
    for (const pool of pools) await pool.release();
    await runtime.close();
  }
}

/** A smoke run with the store's appends timed. */
async function recordingShare(): Promise<void> {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-train-bench-" });
  try {
    const model = join(tmp, "model");
    await saveEmbeddedModel(
      model,
      initEmbeddedModel((purpose, out, std) =>
        fillNormal(randomStream({ seed: 3, purpose }), out, { std })
      ),
    );
    const raw = presetInput("smoke");
    const config = parseConfig(mergeConfig(raw, {
      agents: (raw.agents as { model: string }[]).map((a) => ({ ...a, model })),
      steps: 4,
      group_size: 4,
      batch_size: 2,
      sampling: { temperature: 1, top_p: 1, max_tokens: 24 },
      evaluation: { benchmarks: ["validation"], n_samples: 2, every_steps: 0 },
      runtime: { device: "cpu", threads: 2 },
      store: join(tmp, "events.sqlite"),
    }));
    await using store = await openStore(config.store);
    let appendMs = 0;
    let appended = 0;
    const timed: EventStore<NewEvent> = Object.create(store, {
      append: {
        value: async (...args: Parameters<EventStore<NewEvent>["append"]>) => {
          const t0 = performance.now();
          const result = await store.append(...args);
          appendMs += performance.now() - t0;
          appended += result.appended.length;
          return result;
        },
      },
    });
    const runtime = await openRuntime("cpu", { threads: 2 });
    const t0 = performance.now();
    try {
      await runTraining(config, { store: timed, runtime, runId: "bench-train" });
    } finally {
      await runtime.close();
    }
    const totalMs = performance.now() - t0;
    console.log(
      `training run (${config.steps} steps, smoke refine): ${(totalMs / 1000).toFixed(1)} s`,
    );
    console.log(`events appended: ${appended} in ${(appendMs / 1000).toFixed(2)} s`);
    console.log(
      `recording share of wall time: ${(100 * appendMs / totalMs).toFixed(2)} % (target < 2 %)`,
    );
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}
