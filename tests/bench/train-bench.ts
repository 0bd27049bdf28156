/**
 * `deno task bench train`: one smoke-scale training run (refine, random-init embedded
 * architecture, cpu) with the store's appends timed, to report the share of a training step's
 * wall time that recording the events costs (target under 2%).
 */
import { join } from "node:path";
import { initEmbeddedModel, saveEmbeddedModel } from "../../adapters/model/mod.ts";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { mergeConfig, parseConfig, presetInput } from "../../engine/config/mod.ts";
import { fillNormal, randomStream } from "../../engine/random/mod.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import { type EventStore, type NewEvent, openStore } from "../../events/mod.ts";

/** Runs the suite. */
export async function run(): Promise<void> {
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
