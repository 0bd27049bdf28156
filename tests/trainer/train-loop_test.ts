import assert from "node:assert/strict";
import { join } from "node:path";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { mergeConfig, parseConfig, presetInput } from "../../engine/config/mod.ts";
import { runTraining, TrainingInterrupted } from "../../engine/trainer/train-loop.ts";
import {
  encodeCanonical,
  type NewEvent,
  openStore,
  sha256Hex,
  type StoredEvent,
} from "../../events/mod.ts";
import { randomModel } from "../replay/tiny-run.ts";

async function smokeRun(
  model: string,
  storePath: string,
  runId: string,
  overrides: Record<string, unknown> = {},
) {
  const raw = presetInput("smoke");
  const config = parseConfig(mergeConfig(raw, {
    agents: (raw.agents as { model: string }[]).map((a) => ({ ...a, model })),
    ...overrides,
    steps: 2,
    sampling: { temperature: 1, top_p: 1, max_tokens: 8 },
    evaluation: { benchmarks: ["validation"], n_samples: 2, every_steps: 0 },
    runtime: { device: "cpu", threads: 1 },
    store: storePath,
    ...overrides,
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
    const model = await randomModel(tmp);
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

Deno.test("full fine-tuning and a KL penalty to the base train alongside a LoRA agent", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    // The pretrained model and GRPO: its groups mix right and wrong answers, so both groups get
    // a gradient at step 0 and have moved from the reference by step 1.
    const model = "embedded";
    const raw = presetInput("smoke");
    const agents = (raw.agents as { id: string }[]).map((a) => ({
      ...a,
      model,
      trainable: a.id === "solver" ? { kind: "full" } : { kind: "lora", rank: 2, alpha: 4 },
      optimizer: { lr: 1e-3, warmup_ratio: 0.5 },
    }));
    const run = await smokeRun(model, join(tmp, "kl.sqlite"), "run-kl", {
      agents,
      steps: 2,
      estimator: { kind: "grpo" },
      group_size: 4,
      batch_size: 2,
      sampling: { temperature: 1, top_p: 1, max_tokens: 40 },
      loss: { clip_eps: 0.2, kl_coef: 0.1 },
    });
    const init = run.events.filter((e) => e.type === "policy.initialized");
    const steps = run.events.filter((e) => e.type === "gradient_step.applied");
    assert.equal(steps.length, 4);
    for (const e of steps) {
      if (e.type !== "gradient_step.applied") continue;
      // Step 0 trains from the base (a fresh LoRA adapter's B is 0; full weights are the base):
      // no divergence yet. After one update each group's policy differs from its reference.
      if (e.data.step === 0) assert.ok(e.data.losses.kl < 1e-6, `kl at step 0 ${e.data.losses.kl}`);
      else {assert.ok(
          e.data.losses.kl > 0,
          `kl at step 1 of ${e.data.workerGroup}: ${e.data.losses.kl}`,
        );}
      // Warmup over half of two steps: step 0 at half the lr, step 1 at the full lr.
      assert.equal(e.data.lr, e.data.step === 0 ? 5e-4 : 1e-3);
    }
    assert.equal(init.length, 2);
    for (const e of init) {
      if (e.type !== "policy.initialized") continue;
      if (e.data.workerGroup === "solver") {
        assert.equal(e.data.trainableParameterCount, e.data.parameterCount);
      } else assert.ok(e.data.trainableParameterCount < e.data.parameterCount / 10);
    }
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("an interrupted run stops at a step boundary and says so in the log", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const model = await randomModel(tmp);
    const raw = presetInput("smoke");
    const config = parseConfig(mergeConfig(raw, {
      agents: (raw.agents as { model: string }[]).map((a) => ({ ...a, model })),
      steps: 3,
      sampling: { temperature: 1, top_p: 1, max_tokens: 4 },
      runtime: { device: "cpu", threads: 1 },
      store: join(tmp, "events.sqlite"),
    }));
    await using store = await openStore(config.store);
    const runtime = await openRuntime("cpu", { threads: 1 });
    const interrupt = new AbortController();
    try {
      await assert.rejects(
        runTraining(config, {
          store,
          runtime,
          runId: "stopped",
          signal: interrupt.signal,
          onProgress: (p) => p.stage === "done" && interrupt.abort(),
        }),
        TrainingInterrupted,
      );
    } finally {
      await runtime.close();
    }
    const types: string[] = [];
    let failed: unknown;
    for await (const e of store.readStream("stopped")) {
      types.push(e.type);
      if (e.type === "run.failed") failed = e.data;
    }
    assert.deepEqual(failed, {
      step: 1,
      stage: "interrupted",
      error: {
        name: "TrainingInterrupted",
        message: "stopped after step 0 (1 of 3 steps done); a resume continues at step 1",
      },
    });
    assert.equal(types.filter((t) => t === "step.started").length, 1);
    assert.ok(!types.includes("run.completed"));
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("offloading idle worker groups is recorded and changes no result", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const model = await randomModel(tmp);
    const plain = await smokeRun(model, join(tmp, "plain.sqlite"), "plain", { steps: 1 });
    const offloaded = await smokeRun(model, join(tmp, "off.sqlite"), "off", {
      steps: 1,
      runtime: { device: "cpu", threads: 1, offload_idle: true },
    });
    assert.deepEqual(offloaded.result.parameterHashes, plain.result.parameterHashes);
    const moves = offloaded.events.flatMap((e) =>
      e.type === "worker_group.loaded" || e.type === "worker_group.offloaded"
        ? [`${e.data.step}:${e.data.seq}:${e.data.workerGroup}:${e.type.split(".")[1]}`]
        : []
    );
    // Initial loads; then everyone off, each group on for its own update, and all back on.
    assert.deepEqual(moves, [
      "0:0:solver:loaded",
      "0:0:verifier:loaded",
      "0:1:solver:offloaded",
      "0:1:verifier:offloaded",
      "0:2:solver:loaded",
      "0:3:solver:offloaded",
      "0:2:verifier:loaded",
      "0:3:verifier:offloaded",
      "0:4:solver:loaded",
      "0:4:verifier:loaded",
    ]);
    assert.ok(offloaded.verify.ok);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("updates record the off-policy diagnostics their loss computes, and none without it", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const model = await randomModel(tmp);
    const diagnostics = async (loss: Record<string, unknown>, runId: string) => {
      const { events } = await smokeRun(model, join(tmp, `${runId}.sqlite`), runId, {
        loss: { clip_eps: 0.2, kl_coef: 0.04, ...loss },
        updates: { epochs: 2 },
      });
      return events.flatMap((e) =>
        e.type === "gradient_step.applied"
          ? [[e.data.maxRatio, e.data.dualClipFraction, e.data.klClampFraction]]
          : []
      );
    };
    // New configs: veRL's dual clip and KL clamp, so every update records all three.
    const on = await diagnostics({}, "on");
    assert.ok(on.length > 0);
    for (const [maxRatio, dual, clamped] of on) {
      assert.ok(maxRatio! > 0 && dual! >= 0 && dual! <= 1 && clamped! >= 0 && clamped! <= 1);
    }
    // The second epoch's updates ran on moved weights: some ratio is off 1.
    assert.ok(on.some(([maxRatio]) => maxRatio !== 1), `max ratios ${on.map((d) => d[0])}`);
    // Without them (as every run recorded before them), the events are as they were.
    const off = await diagnostics({ clip_ratio_c: 0, kl_clamp: 0 }, "off");
    assert.deepEqual(off, off.map(() => [undefined, undefined, undefined]));
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
