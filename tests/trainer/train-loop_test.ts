import assert from "node:assert/strict";
import { join } from "node:path";
import { initEmbeddedModel, saveEmbeddedModel } from "../../adapters/model/mod.ts";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { mergeConfig, parseConfig, presetInput } from "../../engine/config/mod.ts";
import { fillNormal, randomStream } from "../../engine/random/mod.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import {
  encodeCanonical,
  type NewEvent,
  openStore,
  sha256Hex,
  type StoredEvent,
} from "../../events/mod.ts";

/** A randomly initialised embedded-architecture model in a temp dir (no pretraining needed). */
async function randomModel(dir: string): Promise<string> {
  const tensors = initEmbeddedModel((purpose, out, std) =>
    fillNormal(randomStream({ seed: 5, purpose }), out, { std })
  );
  await saveEmbeddedModel(dir, tensors);
  return dir;
}

async function smokeRun(model: string, storePath: string, runId: string) {
  const raw = presetInput("smoke");
  const config = parseConfig(mergeConfig(raw, {
    agents: (raw.agents as { model: string }[]).map((a) => ({ ...a, model })),
    steps: 2,
    sampling: { temperature: 1, top_p: 1, max_tokens: 8 },
    evaluation: { benchmarks: ["validation"], n_samples: 2, every_steps: 0 },
    runtime: { device: "cpu", threads: 1 },
    store: storePath,
  }));
  await using store = await openStore(storePath);
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    const result = await runTraining(config, { store, runtime, runId });
    const events: StoredEvent<NewEvent>[] = [];
    for await (const e of store.readStream(runId)) events.push(e as StoredEvent<NewEvent>);
    return { result, events, verify: await store.verify() };
  } finally {
    await runtime.close();
  }
}

Deno.test("a smoke run records a whole refine experiment and reruns bit-identically", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const model = await randomModel(join(tmp, "model"));
    const a = await smokeRun(model, join(tmp, "a.sqlite"), "run-a");
    const types: string[] = a.events.map((e) => e.type);
    assert.equal(types[0], "run.started");
    assert.equal(types[types.length - 1], "run.completed");
    for (
      const t of [
        "policy.initialized",
        "step.started",
        "turn.generated",
        "trajectory.completed",
        "reward.assigned",
        "advantages.computed",
        "gradient_step.applied",
        "checkpoint.saved",
        "evaluation.completed",
      ]
    ) assert.ok(types.includes(t), `no ${t} event`);
    // Two steps, one gradient step per worker group (solver, verifier) each.
    assert.equal(types.filter((t) => t === "gradient_step.applied").length, 4);
    assert.equal(a.verify.ok, true);
    for (const e of a.events) {
      if (e.type !== "turn.generated") continue;
      assert.equal(e.data.logprobs.length, e.data.responseTokens.length);
      assert.equal(e.data.workerGroup, e.data.agent);
    }
    const b = await smokeRun(model, join(tmp, "b.sqlite"), "run-a");
    // Same config, seed and runtime: every event after run.started (whose config names the other
    // store file) is the same, byte for byte in canonical form.
    const canonical = (events: StoredEvent<NewEvent>[]) =>
      events.slice(1).map((e) => {
        const { json, tensors } = encodeCanonical(e.data);
        return `${e.id} ${e.type} ${json} ${sha256Hex(tensors)}`;
      });
    assert.deepEqual(canonical(b.events), canonical(a.events));
    assert.deepEqual(b.result.parameterHashes, a.result.parameterHashes);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
