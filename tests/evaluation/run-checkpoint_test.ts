/**
 * Evaluating a run's checkpoint: the run and step are found in the store, the LoRA adapter is
 * loaded on the run's base model exactly (its hash is the checkpoint's, and the solver's first
 * turns equal those the training run's own evaluation sampled at that step with the same seed),
 * and a run that trained several worker groups, or a step without a checkpoint, is refused with
 * the choices named.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FUSED_OPS, initEmbeddedModel, saveEmbeddedModel } from "../../adapters/model/mod.ts";
import { openRuntime, type Runtime } from "../../adapters/onnx/runtime/mod.ts";
import { mergeConfig, parseConfig, presetInput } from "../../engine/config/mod.ts";
import {
  EvaluationInputError,
  resolveModelSource,
  runEvaluation,
} from "../../engine/evaluation/mod.ts";
import { fillNormal, randomStream } from "../../engine/random/mod.ts";
import { taskSource } from "../../engine/trainer/rollout/task-source.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import { type NewEvent, openStore, type StoredEvent } from "../../events/mod.ts";

type Stored = StoredEvent<NewEvent>;

async function events(store: Awaited<ReturnType<typeof openStore>>, run: string) {
  const out: Stored[] = [];
  for await (const e of store.readStream(run)) out.push(e as Stored);
  return out;
}

/**
 * A 2-step smoke run ("trained") on a random embedded model under `tmp`, with `runtime` merged into
 * its config, and its validation split written as a benchmark file in the same order.
 */
async function trainedRun(
  tmp: string,
  runtime: Runtime,
  runtimeConfig: Record<string, unknown> = {},
) {
  const model = join(tmp, "model");
  await saveEmbeddedModel(
    model,
    initEmbeddedModel((purpose, out, std) =>
      fillNormal(randomStream({ seed: 5, purpose }), out, { std })
    ),
  );
  const storePath = join(tmp, "events.sqlite");
  const raw = presetInput("smoke");
  const config = parseConfig(mergeConfig(raw, {
    agents: (raw.agents as { model: string }[]).map((a) => ({ ...a, model })),
    steps: 2,
    sampling: { temperature: 1, top_p: 1, max_tokens: 8 },
    evaluation: { benchmarks: ["validation"], n_samples: 2, every_steps: 0 },
    runtime: { device: "cpu", threads: 1, ...runtimeConfig },
    store: storePath,
  }));
  {
    await using store = await openStore(storePath);
    await runTraining(config, { store, runtime, runId: "trained" });
  }
  const data = join(tmp, "validation.jsonl");
  const validation = (await taskSource(config)).validation;
  await Deno.writeTextFile(
    data,
    validation.map((q) => JSON.stringify({ id: q.id, problem: q.problem, answer: q.answer }))
      .join("\n"),
  );
  return { model, storePath, config, data, validation };
}

/** The solver's opening turns of the evaluations in `list`, with every coordinate and number. */
function openingTurns(list: Stored[]) {
  return list.filter((e) =>
    e.type === "turn.generated" && e.data.phase === "eval" && e.data.turn === 0
  ).map((e) => {
    if (e.type !== "turn.generated") throw new Error("unreachable");
    const d = e.data;
    return [d.step, d.prompt, d.sample, d.agent, d.text, [...d.responseTokens], [...d.logprobs]];
  });
}

Deno.test("eval of RUN@STEP loads the run's adapter exactly and records it", async () => {
  const tmp = await Deno.makeTempDir();
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    const { model, storePath, config, data, validation } = await trainedRun(tmp, runtime);
    await using store = await openStore(storePath);

    await assert.rejects(
      resolveModelSource(store, "trained"),
      (e: Error) =>
        e instanceof EvaluationInputError &&
        /worker groups solver, verifier at step 1; choose one with --worker-group/.test(e.message),
    );
    await assert.rejects(
      resolveModelSource(store, "trained@7", { workerGroup: "solver" }),
      /trained@7: the run has no checkpoint at step 7; its checkpoints are at steps 0, 1/,
    );
    await assert.rejects(
      resolveModelSource(store, "trained@x"),
      /trained@x: step x is not a step number/,
    );
    const source = await resolveModelSource(store, "trained", { workerGroup: "solver" });
    assert.equal(source.kind, "run-checkpoint");
    assert.equal(source.label, "trained@1/solver");
    assert.equal(source.model, model);

    const result = await runEvaluation({
      store,
      runtime,
      source,
      protocol: "refine",
      benchmarks: [data],
      n: 2,
      seeds: [config.seed],
      runIds: ["evaluated"],
      device: "cpu",
      threads: 1,
    });
    assert.equal(result.step, 1);
    assert.deepEqual(result.benchmarks.map((b) => [b.benchmark, b.problems, b.seeds]), [
      ["validation", validation.length, 1],
    ]);

    const trained = await events(store, "trained");
    const evaluated = await events(store, "evaluated");
    const checkpoint = trained.find((e) =>
      e.type === "checkpoint.saved" && e.data.step === 1 && e.data.workerGroup === "solver"
    );
    const policy = evaluated.find((e) => e.type === "policy.initialized");
    assert.ok(checkpoint?.type === "checkpoint.saved" && policy?.type === "policy.initialized");
    assert.equal(policy.data.blob, checkpoint.data.blob);
    assert.equal(policy.data.parameterHash, checkpoint.data.parameterHash);
    assert.equal(policy.data.source, "run:trained@1/solver");
    assert.equal(policy.data.model, model);
    const trainedSolver = trained.find((e) =>
      e.type === "policy.initialized" && e.data.workerGroup === "solver"
    );
    assert.ok(trainedSolver?.type === "policy.initialized");
    assert.equal(policy.data.trainableParameterCount, trainedSolver.data.trainableParameterCount);

    const started = evaluated[0];
    assert.ok(started.type === "run.started");
    const evalRecord = (started.data.config as {
      eval: {
        model: { run: string; step: number; workerGroup: string; trainable: { kind: string } };
      };
    }).eval;
    assert.deepEqual(
      [evalRecord.model.run, evalRecord.model.step, evalRecord.model.workerGroup],
      ["trained", 1, "solver"],
    );
    assert.equal(evalRecord.model.trainable.kind, "lora");

    // Same weights, seed, prompt and coordinates: the solver's opening turns are the ones the
    // training run's own evaluation sampled at step 1, token for token and logprob for logprob.
    const fromTraining = openingTurns(trained);
    assert.equal(fromTraining.length, validation.length * 2);
    assert.deepEqual(openingTurns(evaluated), fromTraining);
    const completed = evaluated.find((e) => e.type === "evaluation.completed");
    assert.ok(completed?.type === "evaluation.completed");
    assert.equal(completed.data.step, 1);
    assert.equal((await store.verify()).ok, true);
  } finally {
    await runtime.close();
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("eval of a fused run's checkpoint builds the run's graphs: its turns are the run's", async () => {
  const tmp = await Deno.makeTempDir();
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    const fused = [...FUSED_OPS];
    const run = await trainedRun(tmp, runtime, { fused_ops: fused });
    await using store = await openStore(run.storePath);
    const source = await resolveModelSource(store, "trained", { workerGroup: "solver" });
    await runEvaluation({
      store,
      runtime,
      source,
      protocol: "refine",
      benchmarks: [run.data],
      n: 2,
      seeds: [run.config.seed],
      runIds: ["evaluated"],
      device: "cpu",
      threads: 1,
    });
    const evaluated = await events(store, "evaluated");
    const started = evaluated[0];
    assert.ok(started.type === "run.started");
    const recorded = started.data.config as { runtime: { fused_ops: string[] } };
    assert.deepEqual(recorded.runtime.fused_ops, fused);
    const fromTraining = openingTurns(await events(store, "trained"));
    assert.equal(fromTraining.length, run.validation.length * 2);
    assert.deepEqual(openingTurns(evaluated), fromTraining);
  } finally {
    await runtime.close();
    await Deno.remove(tmp, { recursive: true });
  }
});
