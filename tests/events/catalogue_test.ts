import assert from "node:assert/strict";
import { z } from "zod";
import {
  asOfVersion,
  createCatalogue,
  defineEvent,
  type EventType,
  EventValidationError,
  hashConfig,
  type NewEvent,
  openStore,
  runCatalogue,
  SchemaVersionError,
  UnknownEventTypeError,
} from "../../events/mod.ts";
import { sqliteTarget } from "./stores.ts";
import { runStartedEvent, stepEvent, turnEvent } from "./sample-events.ts";

const H = (c: string) => c.repeat(64);

/** One valid event of every run type. */
const everyType: NewEvent[] = [
  runStartedEvent(),
  {
    type: "policy.initialized",
    data: {
      workerGroup: "wg0",
      agents: ["solver", "verifier"],
      model: "tiny-lm",
      source: "random",
      parameterCount: 1000,
      trainableParameterCount: 100,
      parameterHash: H("a"),
      blob: null,
    },
  },
  {
    type: "worker_group.loaded",
    data: { step: 0, workerGroup: "wg0", seq: 0, device: "webgpu:0", bytes: 4000 },
  },
  {
    type: "worker_group.offloaded",
    data: { step: 0, workerGroup: "wg0", seq: 1, device: "webgpu:0", bytes: 4000 },
  },
  stepEvent(0),
  turnEvent({ step: 0, prompt: 0, sample: 0, turn: 0 }),
  {
    type: "trajectory.completed",
    data: {
      step: 0,
      phase: "rollout",
      trajectory: "s0-p0-k0",
      prompt: 0,
      sample: 0,
      problemId: "gsm8k/0",
      question: "What is 6 * 7?",
      gold: "42",
      turns: 1,
      agents: ["solver"],
      finalAnswer: "42",
      correct: true,
      tokens: 120,
      terminationReason: "answered",
    },
  },
  {
    type: "reward.assigned",
    data: {
      step: 0,
      phase: "rollout",
      trajectory: "s0-p0-k0",
      prompt: 0,
      sample: 0,
      agent: null,
      components: { acc: 1, len: 0.25 },
      total: 2.25,
    },
  },
  {
    type: "advantages.computed",
    data: {
      step: 0,
      prompt: 0,
      estimator: "dr-mas",
      scope: "group",
      sigmaConvention: "population",
      eps: 1e-6,
      baseline: {
        global: { mu: 0.5, sigma: 0.5, n: 2 },
        perAgent: { solver: { mu: 0.5, sigma: 0.5, n: 2, multiplier: 1 } },
        batch: null,
      },
      advantages: [{
        trajectory: "s0-p0-k0",
        sample: 0,
        agent: "solver",
        turn: 0,
        reward: 1,
        score: 1,
        advantage: 1,
      }],
    },
  },
  {
    type: "gradient_step.applied",
    data: {
      step: 0,
      workerGroup: "wg0",
      update: 0,
      epoch: 0,
      miniBatch: 0,
      rows: [{ prompt: 0, sample: 0, turn: 0 }],
      agents: ["solver"],
      losses: { policy: NaN, total: NaN },
      gradNormBeforeClip: Infinity,
      gradNormAfterClip: NaN,
      agentGradNorms: {},
      clipFraction: 0,
      kl: 0,
      entropy: 1.2,
      lr: 1e-5,
      clipLow: 0.2,
      clipHigh: 0.28,
      temperature: 0.7,
      loraDropout: 0.05,
      oldLogprobs: "recompute",
      oldLogprobDrift: 3e-7,
      tokens: 300,
      skippedNonFinite: true,
      parameterHash: H("b"),
    },
  },
  {
    type: "checkpoint.saved",
    data: {
      step: 0,
      workerGroup: "wg0",
      blob: H("c"),
      bytes: 10,
      parameterHash: H("b"),
      optimizerBlob: null,
      format: "safetensors",
    },
  },
  {
    type: "evaluation.completed",
    data: {
      step: 0,
      benchmark: "gsm8k",
      samplesPerProblem: 16,
      problems: [{ problemId: "gsm8k/0", n: 16, c: 9 }],
      metrics: { "avg@16": 0.5625, "pass@16": 1 },
    },
  },
  { type: "run.completed", data: { steps: 1, metrics: {} } },
  {
    type: "run.failed",
    data: { step: 0, stage: "update", error: { name: "Error", message: "out of memory" } },
  },
  // Annotations (they go to the annotations stream; the catalogue is one).
  { type: "run.tagged", data: { runId: "run-1", tag: "baseline", seq: 1 } },
  { type: "run.untagged", data: { runId: "run-1", tag: "baseline", seq: 2 } },
  { type: "run.hidden", data: { runId: "run-1", seq: 3 } },
  { type: "run.unhidden", data: { runId: "run-1", seq: 4 } },
];

Deno.test("the catalogue covers a whole run and accepts one valid event of each type", () => {
  assert.deepEqual(
    new Set(everyType.map((e) => e.type)),
    new Set<EventType>(runCatalogue.types as EventType[]),
  );
  for (const e of everyType) runCatalogue.validate(e.type, e.data);
});

Deno.test("every type round-trips through a store, non-finite metrics included", async () => {
  const t = await sqliteTarget();
  const store = await openStore(t.target);
  try {
    await store.append("run-1", everyType);
    const back: NewEvent[] = [];
    for await (const e of store.readStream("run-1")) {
      back.push({ type: e.type, data: e.data } as NewEvent);
    }
    assert.deepEqual(back, everyType);
  } finally {
    await store.close();
    await t.dispose();
  }
});

Deno.test("validation errors name the field", () => {
  const turn = turnEvent({ step: 0, prompt: 0, sample: 0, turn: 0 }) as Extract<
    NewEvent,
    { type: "turn.generated" }
  >;
  const cases: [NewEvent["type"], unknown, string][] = [
    ["turn.generated", { ...turn.data, logprobs: new Float32Array(1) }, "logprobs"],
    ["turn.generated", { ...turn.data, promptTokens: [1, 2] }, "promptTokens"],
    ["turn.generated", { ...turn.data, agent: "" }, "agent"],
    ["turn.generated", { ...turn.data, extra: 1 }, ""],
    [
      "step.started",
      { step: 0, groupSize: 2, prompts: [{ prompt: -1, problemId: "x" }] },
      "prompts[0].prompt",
    ],
    ["run.started", { ...runStartedEvent().data, configHash: H("0") }, "configHash"],
    [
      "run.started",
      { ...runStartedEvent().data, config: { at: new Date(0) }, configHash: H("0") },
      "config.at",
    ],
    [
      "evaluation.completed",
      {
        step: 0,
        benchmark: "b",
        samplesPerProblem: 4,
        problems: [{ problemId: "p", n: 4, c: 5 }],
        metrics: {},
      },
      "problems[0].c",
    ],
  ];
  for (const [type, data, field] of cases) {
    assert.throws(
      () => runCatalogue.validate(type, data),
      (err: unknown) =>
        err instanceof EventValidationError && err.field === field && err.type === type,
      `expected an error naming ${field || "(root)"}`,
    );
  }
  assert.throws(
    () => runCatalogue.validate("turn.generatd" as EventType, {}),
    UnknownEventTypeError,
  );
});

Deno.test("hashConfig is independent of key order", () => {
  assert.equal(hashConfig({ a: 1, b: { c: 2, d: 3 } }), hashConfig({ b: { d: 3, c: 2 }, a: 1 }));
  assert.notEqual(hashConfig({ a: 1 }), hashConfig({ a: 2 }));
});

const noteV1 = defineEvent({
  type: "note.added",
  schemaVersion: 1,
  schema: z.strictObject({ step: z.number().int(), text: z.string() }),
  coordinates: (d) => ({ step: d.step }),
});
const noteV2 = defineEvent({
  type: "note.added",
  schemaVersion: 2,
  schema: z.strictObject({ step: z.number().int(), text: z.string(), author: z.string() }),
  coordinates: (d) => ({ step: d.step }),
});

Deno.test("a v1 event written by old code is read through the v2 upcaster", async () => {
  const t = await sqliteTarget();
  try {
    const v1 = createCatalogue([noteV1]);
    const old = await openStore(t.target, { catalogue: v1 });
    await old.append("run-1", [{ type: "note.added", data: { step: 0, text: "hello" } }]);
    await old.close();

    const v2 = createCatalogue([noteV2], [{
      type: "note.added",
      fromVersion: 1,
      up: (d) => ({ ...(d as { step: number; text: string }), author: "unknown" }),
    }]);
    const store = await openStore(t.target, { catalogue: v2 });
    await store.append("run-1", [{
      type: "note.added",
      data: { step: 1, text: "hi", author: "ann" },
    }]);
    const read = [];
    for await (const e of store.readStream("run-1")) read.push(e);
    assert.deepEqual(read.map((e) => [e.storedSchemaVersion, e.schemaVersion, e.data]), [
      [1, 2, { step: 0, text: "hello", author: "unknown" }],
      [2, 2, { step: 1, text: "hi", author: "ann" }],
    ]);
    assert.equal((await store.verify()).ok, true);
    await store.close();

    // Without an upcaster, or with code older than the log, reading fails loudly.
    for (const catalogue of [createCatalogue([noteV2]), v1]) {
      const s = await openStore(t.target, { catalogue });
      await assert.rejects(async () => {
        for await (const _ of s.readAll()) { /* drain */ }
      }, SchemaVersionError);
      await s.close();
    }
  } finally {
    await t.dispose();
  }
});

Deno.test("v1 turn and advantage events from older logs read as current with the new fields null", () => {
  const turn = turnEvent({ step: 0, prompt: 0, sample: 0, turn: 0 });
  if (turn.type !== "turn.generated") throw new Error("expected a turn event");
  const { role: _role, correct: _correct, ...v1 } = turn.data;
  const upcast = runCatalogue.upcast("turn.generated", 1, v1) as Record<string, unknown>;
  assert.equal(upcast.role, null);
  assert.equal(upcast.correct, null);
  runCatalogue.validate("turn.generated", upcast);
  const v1Advantages = {
    step: 0,
    prompt: 0,
    estimator: "grpo",
    sigmaConvention: "population",
    eps: 1e-6,
    baseline: {
      global: { mu: 0, sigma: 1, n: 2 },
      perAgent: { solver: { mu: 0, sigma: 1, n: 2 } },
    },
    advantages: [],
  };
  const adv = runCatalogue.upcast("advantages.computed", 1, v1Advantages) as typeof v1Advantages;
  assert.deepEqual(adv.baseline.perAgent, { solver: { mu: 0, sigma: 1, n: 2, multiplier: null } });
  runCatalogue.validate("advantages.computed", adv);
});

Deno.test("a v1 trajectory reads with question and gold null; v2 data views as v1 without them", () => {
  const v2 = everyType.find((e) => e.type === "trajectory.completed")!.data as Record<
    string,
    unknown
  >;
  const def = runCatalogue.definition("trajectory.completed");
  assert.equal(def.schemaVersion, 2);
  const v1 = asOfVersion(def, v2, 1) as Record<string, unknown>;
  assert.equal("question" in v1 || "gold" in v1, false);
  assert.deepEqual(
    Object.keys(v1),
    Object.keys(v2).filter((k) => k !== "question" && k !== "gold"),
  );
  // At its own version the data is left as is.
  assert.equal(asOfVersion(def, v2, 2), v2);
  // v1 data is no valid v2 event until upcast, which fills the new fields with null.
  assert.throws(() => runCatalogue.validate("trajectory.completed", v1), EventValidationError);
  const up = runCatalogue.upcast("trajectory.completed", 1, v1) as Record<string, unknown>;
  assert.deepEqual([up.question, up.gold], [null, null]);
  assert.deepEqual({ ...up, question: v2.question, gold: v2.gold }, v2);
  runCatalogue.validate("trajectory.completed", up);
  assert.throws(() => asOfVersion(def, [1], 1), /trajectory\.completed data is not an object/);
});

Deno.test("v2 advantages and v1 gradient steps read as current: what old code did, stated", () => {
  const v2Advantages = {
    step: 0,
    prompt: 0,
    estimator: "reinforce++",
    sigmaConvention: "population",
    eps: 1e-6,
    baseline: {
      global: { mu: 0.5, sigma: 0.5, n: 2 },
      perAgent: { solver: { mu: 0.5, sigma: 0.5, n: 2, multiplier: 1 } },
    },
    advantages: [{ trajectory: "t", sample: 0, agent: "solver", turn: 0, advantage: 1 }],
  };
  const adv = runCatalogue.upcast("advantages.computed", 2, v2Advantages) as {
    scope: string;
    baseline: { batch: unknown };
    advantages: Record<string, unknown>[];
  };
  // Old REINFORCE++ normalized per prompt group: the upcast says so rather than claiming a batch.
  assert.equal(adv.scope, "group");
  assert.equal(adv.baseline.batch, null);
  assert.deepEqual(adv.advantages[0], { ...v2Advantages.advantages[0], reward: null, score: null });
  runCatalogue.validate("advantages.computed", adv);
  const mada = runCatalogue.upcast("advantages.computed", 2, {
    ...v2Advantages,
    estimator: "mada",
  }) as Record<string, unknown>;
  assert.equal(mada.scope, "role");

  const v1Step = {
    step: 0,
    workerGroup: "wg0",
    update: 0,
    agents: ["solver"],
    losses: { policy: 0.1, total: 0.1 },
    gradNormBeforeClip: 2,
    gradNormAfterClip: 1,
    agentGradNorms: { solver: 2 },
    clipFraction: 0,
    kl: 0,
    entropy: 1.2,
    lr: 1e-5,
    tokens: 300,
    skippedNonFinite: false,
    parameterHash: "b".repeat(64),
  };
  const step = runCatalogue.upcast("gradient_step.applied", 1, v1Step) as Record<string, unknown>;
  assert.deepEqual(
    [step.epoch, step.miniBatch, step.rows, step.oldLogprobs, step.temperature],
    [0, 0, null, "rollout", null],
  );
  runCatalogue.validate("gradient_step.applied", step);
});
