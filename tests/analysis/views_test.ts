/**
 * Hand-made events with hand-computed expectations for the derived views: turns (role, round,
 * correct), debate_rounds, lemma_multipliers, and the critic improvement query over them; and
 * lemma_multipliers over generated runs against the multipliers their events recorded.
 */
import assert from "node:assert/strict";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { Kysely } from "kysely";
import { hashConfig, type NewEvent } from "../../events/mod.ts";
import { DuckDBDialect } from "../../analysis/duckdb/mod.ts";
import { catchUp } from "../../analysis/projections/projector.ts";
import type { AnalysisDb } from "../../analysis/queries/analysis-db.ts";
import { criticImprovementOfRun } from "../../analysis/queries/critic-query.ts";
import { runSpec, tempStore } from "./fixtures/fill-store.ts";
import { FAKE_RUNTIME, type FakeRunSpec, writeFakeRun } from "../support/fake-run.ts";

const config = {
  estimator: "mada_rl",
  workflow: "debate",
  agents: [
    { name: "g1", role: "generator" },
    { name: "g2", role: "generator" },
    { name: "g3", role: "generator" },
    { name: "c1", role: "critic" },
  ],
};

function started(): NewEvent {
  return {
    type: "run.started",
    data: {
      config,
      configHash: hashConfig(config),
      seed: 7,
      codeVersion: "views-test",
      runtime: FAKE_RUNTIME,
    },
  };
}

/** One eval debate: generators answer, then critic c1 answers in rounds 1 and 2. */
function debate(
  trajectory: string,
  sample: number,
  answers: (string | null)[],
  final: string | null,
): NewEvent[] {
  const agents = ["g1", "g2", "g3", "c1", "c1"];
  const turns: NewEvent[] = answers.map((parsedAnswer, turn) => ({
    type: "turn.generated",
    data: {
      step: 0,
      phase: "eval",
      trajectory,
      prompt: 0,
      sample,
      turn,
      agent: agents[turn],
      role: agents[turn].startsWith("g") ? "generator" : "critic",
      workerGroup: agents[turn].startsWith("g") ? "gen" : "crit",
      promptTokens: new Int32Array(4),
      responseTokens: new Int32Array(2),
      logprobs: new Float32Array([-1, -3]),
      finishReason: "stop",
      parsedAnswer,
      // Left unrecorded so that the projection's grading from the final answer is what is tested.
      correct: null,
      text: "",
    },
  }));
  return [...turns, {
    type: "trajectory.completed",
    data: {
      step: 0,
      phase: "eval",
      trajectory,
      prompt: 0,
      sample,
      problemId: "q",
      question: "What is 3 + 4?",
      gold: "7",
      turns: answers.length,
      agents,
      finalAnswer: final,
      correct: final === "7",
      tokens: 30,
      terminationReason: "answered",
    },
  }];
}

Deno.test("views: turns role/round/correct, debate_rounds, lemma multipliers, critic query", async () => {
  const { store, dir } = await tempStore();
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  const db = new Kysely<AnalysisDb>({ dialect: new DuckDBDialect({ instance }) });
  try {
    await store.append("debate-1", [
      started(),
      // wrong generator majority (5), critic right in both rounds: a correction.
      ...debate("t0", 0, ["5", "5", "7", "7", "7"], "7"),
      // right generator majority (7), critic wrong in round 1 ("5" = ungraded other answer),
      // back to right in round 2.
      ...debate("t1", 1, ["7", "7", null, "5", "7"], "7"),
      {
        type: "advantages.computed",
        data: {
          step: 0,
          prompt: 0,
          // Under MADA-RL the engine records no multiplier; these are Dr. MAS's statistics.
          estimator: "dr-mas",
          scope: "group",
          sigmaConvention: "population",
          eps: 1e-6,
          // mu = 1/4, sigma^2 = 3/16; c1: mu_k = 2/3, sigma_k^2 = 2/9 -> (2/9 + 25/144)/(3/16) = 19/9
          baseline: {
            global: { mu: 0.25, sigma: Math.sqrt(3 / 16), n: 4 },
            perAgent: {
              c1: { mu: 2 / 3, sigma: Math.sqrt(2 / 9), n: 3, multiplier: 19 / 9 },
              g1: { mu: 0.25, sigma: Math.sqrt(3 / 16), n: 4, multiplier: 1 },
            },
            batch: null,
          },
          advantages: [],
        },
      },
    ]);
    await catchUp(conn, store);
    const turns = (await conn.runAndReadAll(
      "SELECT trajectory, turn, agent, role, round, correct, tokens, mean_logprob FROM turns ORDER BY trajectory, turn",
    )).getRowObjectsJS();
    assert.deepEqual(
      turns.filter((t) => t.trajectory === "t1").map((
        t,
      ) => [t.agent, t.role, Number(t.round), t.correct]),
      [
        ["g1", "generator", 0, true],
        ["g2", "generator", 0, true],
        ["g3", "generator", 0, false], // unparsed answer counts as wrong
        ["c1", "critic", 1, null], // "5" differs from the graded final answer: not graded
        ["c1", "critic", 2, true],
      ],
    );
    assert.equal(Number(turns[0].tokens), 6);
    assert.equal(turns[0].mean_logprob, -2);
    const rounds = (await conn.runAndReadAll(
      "SELECT trajectory, round, answers, correct, accuracy FROM debate_rounds ORDER BY ALL",
    )).getRowObjectsJS();
    assert.deepEqual(
      rounds.map((
        r,
      ) => [r.trajectory, Number(r.round), Number(r.answers), Number(r.correct), r.accuracy]),
      [
        // accuracy counts graded answers only: the two "5"s are ungraded (NULL)
        ["t0", 0, 3, 1, 1],
        ["t0", 1, 1, 1, 1],
        ["t0", 2, 1, 1, 1],
        ["t1", 0, 3, 2, 2 / 3],
        ["t1", 1, 1, 0, null],
        ["t1", 2, 1, 1, 1],
      ],
    );
    const lemma =
      (await conn.runAndReadAll("SELECT agent, multiplier FROM lemma_multipliers ORDER BY agent"))
        .getRowObjectsJS();
    assert.ok(Math.abs((lemma[0].multiplier as number) - 19 / 9) < 1e-12);
    assert.ok(Math.abs((lemma[1].multiplier as number) - 1) < 1e-12);
    const [r1, r2] = await criticImprovementOfRun(db, "debate-1", "eval");
    // round 1: t0 wrong -> right; t1 right -> (ungraded, counted not right) wrong.
    assert.deepEqual([r1.round, r1.wrongToRight, r1.rightToWrong, r1.improvementRate], [
      1,
      1,
      1,
      0.5,
    ]);
    assert.deepEqual([r2.round, r2.wrongToRight, r2.rightToWrong, r2.accuracy], [2, 1, 0, 1]);
    assert.deepEqual(await criticImprovementOfRun(db, "debate-1", "rollout"), []);
  } finally {
    await db.destroy();
    conn.closeSync();
    instance.closeSync();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runs: workflow and estimator come from the engine's nested config keys", async () => {
  const { store, dir } = await tempStore();
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    const engineConfig = {
      workflow: { kind: "refine", max_loops: 3 },
      estimator: { kind: "dr-mas", sigma: "population", eps: 1e-6 },
    };
    const event = started();
    if (event.type !== "run.started") throw new Error("expected run.started");
    await store.append("engine-run", [{
      type: "run.started",
      data: { ...event.data, config: engineConfig, configHash: hashConfig(engineConfig) },
    }]);
    await catchUp(conn, store);
    const runs = (await conn.runAndReadAll("SELECT workflow, estimator FROM runs"))
      .getRowObjectsJS();
    assert.deepEqual(runs, [{ workflow: "refine", estimator: "dr-mas" }]);
  } finally {
    conn.closeSync();
    instance.closeSync();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/** The per-agent statistics and multipliers a run's advantages.computed events recorded. */
function recordedMultipliers(events: readonly NewEvent[]) {
  return events.flatMap((e) =>
    e.type === "advantages.computed"
      ? Object.entries(e.data.baseline.perAgent).map(([agent, s]) => ({
        key: `${e.data.step}/${e.data.prompt}/${agent}`,
        global: e.data.baseline.global,
        agent: s,
      }))
      : []
  );
}

/** Appends generated runs to a fresh store, projects them, and hands each run's events over. */
async function projected(
  specs: readonly FakeRunSpec[],
  check: (conn: DuckDBConnection, events: NewEvent[][]) => Promise<void>,
) {
  const { store, dir } = await tempStore();
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    const events: NewEvent[][] = [];
    for (const spec of specs) events.push(await writeFakeRun(store, spec));
    await catchUp(conn, store);
    await check(conn, events);
  } finally {
    conn.closeSync();
    instance.closeSync();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
}

async function lemmaRows(conn: DuckDBConnection, runId: string) {
  const rows = (await conn.runAndReadAll(
    `SELECT step, prompt, agent, multiplier FROM lemma_multipliers WHERE run_id = $1`,
    [runId],
  )).getRowObjectsJS();
  return new Map(rows.map((r) => [`${r.step}/${r.prompt}/${r.agent}`, r.multiplier]));
}

Deno.test("lemma_multipliers: the recorded multiplier under unbiased sigma, not a recomputation", async () => {
  const spec = runSpec({ runId: "unbiased", estimator: "dr-mas", sigma: "unbiased", prompts: 4 });
  await projected([spec], async (conn, [events]) => {
    // The recorded sigmas divide by n - 1 while the engine's multiplier uses population moments:
    // the view must carry the recorded value, which the recorded sigmas do not reproduce.
    const recorded = recordedMultipliers(events);
    const view = await lemmaRows(conn, "unbiased");
    assert.equal(view.size, recorded.length);
    let differs = 0;
    for (const { key, global, agent } of recorded) {
      assert.equal(view.get(key), agent.multiplier, key);
      if (agent.multiplier === null) continue;
      const fromSigmas = (agent.sigma ** 2 + (agent.mu - global.mu) ** 2) / global.sigma ** 2;
      if (Math.abs(fromSigmas - agent.multiplier) > 1e-6) differs++;
    }
    assert.ok(differs > 0, "the run has groups where a recomputation differs");
  });
});

Deno.test("lemma_multipliers: NULL for a MADA-RL run, which records no multiplier", async () => {
  await projected([runSpec({ runId: "mada", estimator: "mada" })], async (conn, [events]) => {
    const recorded = recordedMultipliers(events);
    assert.ok(recorded.every((r) => r.agent.multiplier === null));
    // The global spread is often > 0, where a recomputation would invent a value.
    assert.ok(recorded.some((r) => r.global.sigma > 0));
    const view = await lemmaRows(conn, "mada");
    assert.equal(view.size, recorded.length);
    assert.deepEqual(new Set(view.values()), new Set([null]));
  });
});

/** One hand-made advantages.computed of prompt group `prompt` at step 0. */
function groupStats(
  prompt: number,
  estimator: string,
  scope: "group" | "batch" | "role",
  global: { mu: number; sigma: number; n: number },
  perAgent: Record<string, { mu: number; sigma: number; n: number }>,
): NewEvent {
  return {
    type: "advantages.computed",
    data: {
      step: 0,
      prompt,
      estimator,
      scope,
      sigmaConvention: "population",
      eps: 1e-6,
      baseline: {
        global,
        perAgent: Object.fromEntries(
          Object.entries(perAgent).map(([a, s]) => [a, { ...s, multiplier: null }]),
        ),
        batch: null,
      },
      advantages: [],
    },
  };
}

Deno.test("lemma_multipliers: unbounded is NULL under MADA-RL (estimator mada or scope role)", async () => {
  const { store, dir } = await tempStore();
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    // Every group has global sigma = 0 while c1's recorded statistics differ from the global
    // ones: unbounded under a global baseline, not a question the lemma answers under MADA-RL,
    // whose per-role rewards differ from the trajectory's by design.
    const flat = { mu: 1, sigma: 0, n: 2 };
    const c1 = { mu: 0.5, sigma: 0.5, n: 2 };
    const g1 = { mu: 1, sigma: 0, n: 2 };
    await store.append("mixed", [
      started(),
      groupStats(0, "dr-mas", "group", flat, { c1, g1 }),
      groupStats(1, "mada", "role", flat, { c1, g1 }),
      // a role-scope estimator under another name, and mada however its scope reads
      groupStats(2, "mada-variant", "role", flat, { c1, g1 }),
      groupStats(3, "mada", "group", flat, { c1, g1 }),
    ]);
    await catchUp(conn, store);
    const rows = (await conn.runAndReadAll(
      "SELECT prompt, agent, unbounded FROM lemma_multipliers ORDER BY prompt, agent",
    )).getRowObjectsJS();
    assert.deepEqual(rows.map((r) => [Number(r.prompt), r.agent, r.unbounded]), [
      [0, "c1", true],
      [0, "g1", false],
      [1, "c1", null],
      [1, "g1", null],
      [2, "c1", null],
      [2, "g1", null],
      [3, "c1", null],
      [3, "g1", null],
    ]);
  } finally {
    conn.closeSync();
    instance.closeSync();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
