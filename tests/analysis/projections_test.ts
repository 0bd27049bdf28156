import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { Kysely } from "kysely";
import { type NewEvent, openStore } from "../../events/mod.ts";
import { DuckDBDialect } from "../../analysis/duckdb/mod.ts";
import { catchUp, rebuild } from "../../analysis/projections/projector.ts";
import { EXPORTED, TABLES } from "../../analysis/projections/schema.ts";
import type { AnalysisDb } from "../../analysis/queries/analysis-db.ts";
import { loadRunSummaries } from "../../analysis/queries/run-summaries.ts";
import { appendLegacyRun, runSpec, tempStore } from "./fixtures/fill-store.ts";
import { fakeRunEvents, type FakeRunSpec, writeFakeRun } from "../support/fake-run.ts";
import { asTrajectoryV1, trajectoryV1Catalogue } from "../events/fixtures/trajectory-v1.ts";

async function withDuck<T>(body: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    return await body(conn);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

async function all(conn: DuckDBConnection, sql: string): Promise<Record<string, unknown>[]> {
  return (await conn.runAndReadAll(sql)).getRowObjectsJS();
}

/** Every base table and view, rows sorted, as JSON text: equal dumps mean equal projections. */
async function dump(conn: DuckDBConnection): Promise<string> {
  const names = [...Object.keys(TABLES), ...EXPORTED];
  const parts: string[] = [];
  for (const name of names) {
    const rows = await all(conn, `SELECT * FROM ${name} ORDER BY ALL`);
    parts.push(`${name}:${JSON.stringify(rows, (_k, v) => typeof v === "bigint" ? `${v}n` : v)}`);
  }
  return parts.join("\n");
}

const count = (events: NewEvent[], type: string) => events.filter((e) => e.type === type).length;

Deno.test("projections: every event lands in its table; runs and evals read right", async () => {
  const { store, dir } = await tempStore();
  try {
    const a = await writeFakeRun(store, runSpec({ runId: "run-a", estimator: "grpo", seed: 1 }));
    const b = await writeFakeRun(
      store,
      runSpec({ runId: "run-b", estimator: "dr-mas", seed: 2, accuracy: 0.8 }),
    );
    await withDuck(async (conn) => {
      const r = await catchUp(conn, store);
      assert.equal(r.from, 0);
      assert.equal(r.events, a.length + b.length);
      assert.equal(r.to, await store.lastPosition());
      const n = async (t: string) =>
        Number((await all(conn, `SELECT count(*) AS n FROM ${t}`))[0].n);
      const events = [...a, ...b];
      assert.equal(await n("turns"), count(events, "turn.generated"));
      assert.equal(await n("trajectories"), count(events, "trajectory.completed"));
      assert.equal(await n("rewards"), count(events, "reward.assigned"));
      assert.equal(await n("grad_steps"), count(events, "gradient_step.applied"));
      assert.equal(await n("checkpoints"), count(events, "checkpoint.saved"));
      assert.equal(await n("steps"), count(events, "step.started"));
      const runs = await all(
        conn,
        "SELECT run_id, estimator, workflow, seed, models, status, trainable_parameters FROM runs ORDER BY run_id",
      );
      assert.deepEqual(
        runs.map((r) => ({
          ...r,
          seed: Number(r.seed),
          trainable_parameters: Number(r.trainable_parameters),
        })),
        [
          {
            run_id: "run-a",
            estimator: "grpo",
            workflow: "single",
            seed: 1,
            models: "tiny-test",
            status: "completed",
            trainable_parameters: 20000,
          },
          {
            run_id: "run-b",
            estimator: "dr-mas",
            workflow: "single",
            seed: 2,
            models: "tiny-test",
            status: "completed",
            trainable_parameters: 20000,
          },
        ],
      );
      // avg@k per benchmark recomputed from the appended evaluation events: two benchmarks
      // evaluated after the last step of each run.
      assert.equal(events.filter((e) => e.type === "evaluation.completed").length, 2 * 2);
      for (const e of events) {
        if (e.type !== "evaluation.completed") continue;
        const expected = e.data.problems.reduce((s, p) => s + p.c / p.n, 0) /
          e.data.problems.length;
        const run = a.includes(e) ? "run-a" : "run-b";
        const [row] = await all(
          conn,
          `SELECT avg_at_k, problems, k FROM eval_summary WHERE run_id = '${run}' AND benchmark = '${e.data.benchmark}'`,
        );
        assert.ok(Math.abs((row.avg_at_k as number) - expected) < 1e-12);
        assert.equal(Number(row.problems), e.data.problems.length);
      }
      // the advantages view carries the baseline statistics the event recorded.
      const adv = a.find((e) => e.type === "advantages.computed")!;
      if (adv.type !== "advantages.computed") throw new Error("unreachable");
      const [row] = await all(
        conn,
        `SELECT global_mu, global_sigma, agent_mu, estimator, sigma_convention FROM advantages WHERE run_id = 'run-a' AND step = 0 AND prompt = 0 AND agent = 'solver' LIMIT 1`,
      );
      assert.equal(row.global_mu, adv.data.baseline.global.mu);
      assert.equal(row.global_sigma, adv.data.baseline.global.sigma);
      assert.equal(row.agent_mu, adv.data.baseline.perAgent.solver.mu);
      assert.deepEqual([row.estimator, row.sigma_convention], ["grpo", "population"]);
    });
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("projections: incremental catch-up equals a rebuild from zero", async () => {
  const { store, dir } = await tempStore();
  try {
    await withDuck(async (incremental) => {
      await writeFakeRun(store, runSpec({ runId: "run-a" }));
      const first = await catchUp(incremental, store, { batchSize: 37 });
      await writeFakeRun(store, runSpec({ runId: "run-b", estimator: "dr-mas", seed: 5 }));
      const second = await catchUp(incremental, store, { batchSize: 37 });
      assert.equal(second.from, first.to);
      assert.equal(second.to, await store.lastPosition());
      const none = await catchUp(incremental, store);
      assert.deepEqual([none.events, none.rows], [0, 0]);
      const incrementalDump = await dump(incremental);
      await withDuck(async (fresh) => {
        await catchUp(fresh, store);
        assert.equal(await dump(fresh), incrementalDump);
      });
      const again = await rebuild(incremental, store);
      assert.equal(again.from, 0);
      assert.equal(await dump(incremental), incrementalDump);
    });
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("projections: a file built by another schema version is rebuilt from zero", async () => {
  const { store, dir } = await tempStore();
  try {
    await writeFakeRun(store, runSpec({ runId: "run-a", steps: 1 }));
    await withDuck(async (conn) => {
      const first = await catchUp(conn, store);
      const before = await dump(conn);
      await conn.run("UPDATE projection_state SET schema_version = schema_version - 1");
      await conn.run("DELETE FROM turn_events");
      const again = await catchUp(conn, store);
      assert.deepEqual([again.from, again.to, again.events], [0, first.to, first.events]);
      assert.equal(await dump(conn), before);
    });
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("projections: a store replaced at the same path is projected again, not continued", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-analysis-" });
  const path = `${dir}/events.sqlite`;
  try {
    await withDuck(async (conn) => {
      const a = await openStore(path);
      await writeFakeRun(a, runSpec({ runId: "run-a", steps: 1 }));
      const first = await catchUp(conn, a);
      assert.equal(first.rebuiltBecause, null);
      await a.close();
      await Deno.remove(path);
      // Store B: other runs, more events than A, so continuing would skip B's first events.
      const b = await openStore(path);
      try {
        await writeFakeRun(b, runSpec({ runId: "run-b", seed: 2 }));
        await writeFakeRun(b, runSpec({ runId: "run-c", seed: 3 }));
        assert.ok((await b.lastPosition()) > first.to);
        const second = await catchUp(conn, b);
        assert.match(second.rebuiltBecause ?? "", /^the projections were built from another store/);
        assert.deepEqual([second.from, second.to], [0, await b.lastPosition()]);
        const runs = await all(conn, "SELECT run_id FROM runs ORDER BY run_id");
        assert.deepEqual(runs.map((r) => r.run_id), ["run-b", "run-c"]);
        await withDuck(async (fresh) => {
          await catchUp(fresh, b);
          assert.equal(await dump(conn), await dump(fresh));
        });
        const third = await catchUp(conn, b);
        assert.deepEqual([third.rebuiltBecause, third.events], [null, 0]);
      } finally {
        await b.close();
      }
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("projections: a rewritten or missing event at the last projected position rebuilds", async () => {
  const { store, dir } = await tempStore();
  try {
    await writeFakeRun(store, runSpec({ runId: "run-a", steps: 1 }));
    await writeFakeRun(store, runSpec({ runId: "run-b", steps: 1, seed: 2 }));
    await withDuck(async (conn) => {
      const first = await catchUp(conn, store);
      const before = await dump(conn);
      const db = new DatabaseSync(`${dir}/events.sqlite`);
      try {
        // The same store (same id), the event at the remembered position rewritten.
        db.prepare("UPDATE events SET hash = ? WHERE position = ?").run("f".repeat(64), first.to);
        const second = await catchUp(conn, store);
        assert.equal(
          second.rebuiltBecause,
          `the event at position ${first.to} is not the one projected there`,
        );
        assert.deepEqual([second.from, second.to, second.events], [0, first.to, first.events]);
        assert.equal(await dump(conn), before);
        // The log cut short below the remembered position.
        db.prepare("DELETE FROM events WHERE position >= ?").run(first.to - 1);
        const third = await catchUp(conn, store);
        assert.equal(
          third.rebuiltBecause,
          `the store ends before position ${first.to}, the last one projected`,
        );
        assert.equal(third.to, first.to - 2);
      } finally {
        db.close();
      }
    });
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/** Appends `specs` to a fresh store, projects them, and hands the connection and events over. */
async function projectedRuns(
  specs: readonly FakeRunSpec[],
  check: (conn: DuckDBConnection, events: NewEvent[][], instance: DuckDBInstance) => Promise<void>,
) {
  const { store, dir } = await tempStore();
  try {
    const events: NewEvent[][] = [];
    for (const spec of specs) events.push(await writeFakeRun(store, spec));
    const instance = await DuckDBInstance.create(":memory:");
    const conn = await instance.connect();
    try {
      await catchUp(conn, store);
      await check(conn, events, instance);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const near = (a: unknown, b: number, tol = 1e-12) =>
  assert.ok(Math.abs((a as number) - b) <= tol * Math.max(1, Math.abs(b)), `${a} != ${b}`);

Deno.test("projections: reinforce++ batch statistics are the step's, on every prompt group", async () => {
  const specs = [
    runSpec({ runId: "rpp", estimator: "reinforce++", prompts: 3, groupSize: 4, steps: 3 }),
    runSpec({ runId: "grpo", estimator: "grpo" }),
  ];
  await projectedRuns(specs, async (conn, [rpp]) => {
    // One set of batch statistics per step, shared by all its prompt groups.
    const perStep = await all(
      conn,
      `SELECT step, count(*) AS groups, count(DISTINCT (batch_mu, batch_sigma, batch_n)) AS stats,
         string_agg(DISTINCT scope, ',') AS scope, any_value(batch_mu) AS mu,
         any_value(batch_sigma) AS sigma, any_value(batch_n) AS n
       FROM advantage_groups WHERE run_id = 'rpp' GROUP BY step ORDER BY step`,
    );
    assert.equal(perStep.length, 3);
    for (const r of perStep) {
      assert.deepEqual([Number(r.groups), Number(r.stats), r.scope], [3, 1, "batch"]);
      const recorded = rpp.find((e) =>
        e.type === "advantages.computed" && e.data.step === Number(r.step)
      );
      if (recorded?.type !== "advantages.computed") throw new Error("no advantages event");
      assert.deepEqual(
        { mu: r.mu, sigma: r.sigma, n: Number(r.n) },
        { ...recorded.data.baseline.batch },
      );
    }
    // In SQL: n counts the step's response tokens, and mu is the token-weighted mean of the
    // group-centred scores (REINFORCE++-baseline's whitening input).
    const check = await all(
      conn,
      `SELECT a.step, any_value(a.batch_mu) AS batch_mu, any_value(a.batch_n) AS batch_n,
         sum(t.response_tokens) AS tokens,
         sum((a.score - a.global_mu) * t.response_tokens) / sum(t.response_tokens) AS mu,
         count(*) FILTER (WHERE a.reward IS NULL OR a.score IS NULL) AS missing,
         count(DISTINCT a.scope) AS scopes
       FROM advantages a JOIN turns t ON t.run_id = a.run_id AND t.step = a.step
         AND t.phase = 'rollout' AND t.trajectory = a.trajectory AND t.turn = a.turn
       WHERE a.run_id = 'rpp' GROUP BY a.step ORDER BY a.step`,
    );
    assert.equal(check.length, 3, "one row per step");
    for (const r of check) {
      assert.equal(Number(r.batch_n), Number(r.tokens));
      near(r.batch_mu, r.mu as number);
      assert.deepEqual([Number(r.missing), Number(r.scopes)], [0, 1]);
    }
    // Reward and score of each advantage entry as recorded.
    const entries = rpp.flatMap((e) =>
      e.type === "advantages.computed"
        ? e.data.advantages.map((
          a,
        ) => [e.data.step, e.data.prompt, a.sample, a.turn, a.reward, a.score])
        : []
    );
    const rows = await all(
      conn,
      `SELECT step, prompt, sample, turn, reward, score FROM advantages WHERE run_id = 'rpp'
       ORDER BY step, prompt, sample, turn`,
    );
    assert.deepEqual(
      rows.map((
        r,
      ) => [Number(r.step), Number(r.prompt), Number(r.sample), Number(r.turn), r.reward, r.score]),
      entries,
    );
    // A group-scope estimator: scope group, no batch statistics.
    const [grpo] = await all(
      conn,
      `SELECT string_agg(DISTINCT scope, ',') AS scope, count(batch_mu) AS batch,
         count(*) AS groups FROM advantage_groups WHERE run_id = 'grpo'`,
    );
    assert.deepEqual([grpo.scope, Number(grpo.batch)], ["group", 0]);
    assert.ok(Number(grpo.groups) > 0);
  });
});

Deno.test("projections: PPO mini-batches are several updates per step, their rows partition each epoch", async () => {
  const spec = runSpec({
    runId: "ppo",
    prompts: 3,
    groupSize: 4,
    steps: 2,
    updates: { epochs: 2, miniBatches: 3 },
  });
  await projectedRuns([spec], async (conn, [events], instance) => {
    const updates = await all(
      conn,
      `SELECT step, wg, list("update"::INTEGER ORDER BY "update") AS updates,
         list(epoch::INTEGER ORDER BY "update") AS epochs,
         list(mini_batch::INTEGER ORDER BY "update") AS mini_batches
       FROM grad_steps WHERE run_id = 'ppo' GROUP BY step, wg ORDER BY step, wg`,
    );
    assert.equal(updates.length, 2 * 2);
    for (const u of updates) {
      assert.deepEqual(u.updates, [0, 1, 2, 3, 4, 5]);
      assert.deepEqual(u.epochs, [0, 0, 0, 1, 1, 1]);
      assert.deepEqual(u.mini_batches, [0, 1, 2, 0, 1, 2]);
    }
    // Each epoch's mini-batches together hold each of the worker group's rollout turns of the
    // step exactly once.
    const [cover] = await all(
      conn,
      `WITH r AS (
         SELECT step, wg, epoch, prompt, sample, turn, count(*) AS n FROM grad_step_rows
         WHERE run_id = 'ppo' GROUP BY ALL),
       t AS (
         SELECT t.step, t.wg, g.epoch, t.prompt, t.sample, t.turn FROM turns t
         JOIN (SELECT DISTINCT run_id, step, wg, epoch FROM grad_steps) g
           ON g.run_id = t.run_id AND g.step = t.step AND g.wg = t.wg
         WHERE t.run_id = 'ppo' AND t.phase = 'rollout')
       SELECT count(*) AS turns, count(*) FILTER (WHERE r.n IS NULL) AS missing,
         count(*) FILTER (WHERE t.turn IS NULL) AS extra,
         count(*) FILTER (WHERE r.n > 1) AS repeated
       FROM t FULL JOIN r USING (step, wg, epoch, prompt, sample, turn)`,
    );
    assert.deepEqual(
      [Number(cover.missing), Number(cover.extra), Number(cover.repeated)],
      [0, 0, 0],
    );
    assert.ok(Number(cover.turns) > 2 * 2 * 2 * 3);
    // Mini-batch sizes within an epoch differ by at most one; the epochs shuffle differently.
    const sizes = await all(
      conn,
      `SELECT max(n) - min(n) AS spread FROM (
         SELECT step, wg, epoch, mini_batch, count(*) AS n FROM grad_step_rows
         WHERE run_id = 'ppo' GROUP BY ALL) GROUP BY step, wg, epoch`,
    );
    assert.ok(sizes.length > 0, "no mini-batch to compare");
    assert.ok(sizes.every((s) => Number(s.spread) <= 1));
    const [{ moved }] = await all(
      conn,
      `SELECT count(*) AS moved FROM grad_step_rows a JOIN grad_step_rows b
         ON a.run_id = b.run_id AND a.step = b.step AND a.wg = b.wg AND a.prompt = b.prompt
         AND a.sample = b.sample AND a.turn = b.turn AND a.epoch = 0 AND b.epoch = 1
       WHERE a.run_id = 'ppo' AND a.mini_batch <> b.mini_batch`,
    );
    assert.ok(Number(moved) > 0);
    // The rows table is the events' rows, and the update settings are projected as recorded.
    const grads = events.filter((e) => e.type === "gradient_step.applied");
    const [{ n }] = await all(conn, `SELECT count(*) AS n FROM grad_step_rows`);
    assert.equal(
      Number(n),
      grads.reduce((s, e) => s + (e.type === "gradient_step.applied" ? e.data.rows!.length : 0), 0),
    );
    const settings = await all(
      conn,
      `SELECT DISTINCT clip_low, clip_high, temperature, lora_dropout, old_logprobs,
         old_logprob_drift IS NOT NULL AS drift FROM grad_steps WHERE run_id = 'ppo'`,
    );
    assert.deepEqual(settings, [{
      clip_low: 0.2,
      clip_high: 0.28,
      temperature: 1,
      lora_dropout: 0,
      old_logprobs: "recompute",
      drift: true,
    }]);
    // The report reads every update, in the order applied, not one per step.
    const db = new Kysely<AnalysisDb>({ dialect: new DuckDBDialect({ instance }) });
    try {
      const [summary] = await loadRunSummaries(db, ["ppo"]);
      assert.equal(summary.gradNorms.length, 2, "both worker groups");
      for (const wg of summary.gradNorms) {
        const recorded = grads.flatMap((e) =>
          e.type === "gradient_step.applied" && e.data.workerGroup === wg.wg
            ? [e.data.gradNormBeforeClip]
            : []
        );
        assert.equal(wg.norms.length, 2 * 6);
        assert.deepEqual(wg.norms, recorded);
      }
    } finally {
      await db.destroy();
    }
  });
});

Deno.test("projections: a log from before advantages v3 and gradient steps v2 reads with the new fields NULL", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-analysis-" });
  const path = `${dir}/events.sqlite`;
  try {
    const old = await appendLegacyRun(path, runSpec({ runId: "old" }));
    const oldMada = await appendLegacyRun(path, runSpec({ runId: "old-mada", estimator: "mada" }));
    const store = await openStore(path);
    try {
      const current = await writeFakeRun(
        store,
        runSpec({ runId: "new", estimator: "reinforce++" }),
      );
      await withDuck(async (conn) => {
        const r = await catchUp(conn, store);
        assert.equal(r.events, old.length + oldMada.length + current.length);
        const groups = await all(
          conn,
          `SELECT run_id, string_agg(DISTINCT scope, ',') AS scope, count(batch_mu) AS batch,
             count(*) AS groups FROM advantage_groups GROUP BY run_id ORDER BY run_id`,
        );
        assert.deepEqual(groups.map((g) => [g.run_id, g.scope, Number(g.batch)]), [
          ["new", "batch", Number(groups[0].groups)],
          ["old", "group", 0],
          ["old-mada", "role", 0],
        ]);
        const [adv] = await all(
          conn,
          `SELECT count(*) AS n, count(reward) AS reward, count(score) AS score FROM advantages
           WHERE run_id LIKE 'old%'`,
        );
        const entries = [...old, ...oldMada].reduce(
          (s, e) => s + (e.type === "advantages.computed" ? e.data.advantages.length : 0),
          0,
        );
        assert.ok(entries > 0);
        assert.equal(Number(adv.n), entries);
        assert.deepEqual([Number(adv.reward), Number(adv.score)], [0, 0]);
        const grads = await all(
          conn,
          `SELECT DISTINCT "update", epoch, mini_batch, clip_low, clip_high, temperature,
             lora_dropout, old_logprobs, old_logprob_drift FROM grad_steps WHERE run_id = 'old'`,
        );
        assert.deepEqual(grads, [{
          update: 0n,
          epoch: 0n,
          mini_batch: 0n,
          clip_low: null,
          clip_high: null,
          temperature: null,
          lora_dropout: null,
          old_logprobs: "rollout",
          old_logprob_drift: null,
        }]);
        assert.equal(
          Number(
            (await all(conn, `SELECT count(*) AS n FROM grad_steps WHERE run_id = 'old'`))[0].n,
          ),
          count(old, "gradient_step.applied"),
        );
        const rows = await all(
          conn,
          `SELECT run_id, count(*) AS n FROM grad_step_rows GROUP BY run_id ORDER BY run_id`,
        );
        assert.deepEqual(rows.map((x) => x.run_id), ["new"]);
        // MADA-RL from an old log (scope role by the upcaster): no unbounded verdict either.
        const lemma = await all(
          conn,
          `SELECT count(*) AS n, count(unbounded) AS verdicts FROM lemma_multipliers
           WHERE run_id = 'old-mada'`,
        );
        assert.ok(Number(lemma[0].n) > 0);
        assert.equal(Number(lemma[0].verdicts), 0);
      });
    } finally {
      await store.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("projections: trajectories carry question and gold; NULL from a log before v2", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-analysis-" });
  const path = `${dir}/events.sqlite`;
  try {
    {
      await using old = await openStore(path, { catalogue: trajectoryV1Catalogue });
      for (const events of fakeRunEvents(runSpec({ runId: "old" }))) {
        await old.append("old", events.map(asTrajectoryV1));
      }
    }
    await using store = await openStore(path);
    const current = await writeFakeRun(store, runSpec({ runId: "new" }));
    const logged = new Map(
      current.flatMap((e) =>
        e.type === "trajectory.completed"
          ? [[e.data.trajectory, [e.data.question, e.data.gold]]]
          : []
      ),
    );
    await withDuck(async (conn) => {
      await catchUp(conn, store);
      const rows = await all(
        conn,
        `SELECT run_id, trajectory, question, gold FROM trajectories ORDER BY run_id, trajectory`,
      );
      const old = rows.filter((r) => r.run_id === "old");
      assert.equal(old.length, count(current, "trajectory.completed"));
      assert.ok(old.every((r) => r.question === null && r.gold === null));
      const fresh = rows.filter((r) => r.run_id === "new");
      assert.equal(fresh.length, logged.size);
      for (const r of fresh) {
        assert.match(String(r.question), /^What is 6 \* 7\? \(p\d+\)$/);
        assert.deepEqual([r.question, r.gold], logged.get(String(r.trajectory)));
      }
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
