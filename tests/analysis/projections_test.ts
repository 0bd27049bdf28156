import assert from "node:assert/strict";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import type { NewEvent } from "../../events/mod.ts";
import { catchUp, rebuild } from "../../analysis/projections/projector.ts";
import { EXPORTED, TABLES } from "../../analysis/projections/schema.ts";
import { appendRun, runSpec, tempStore } from "./fixtures/fill-store.ts";

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
    const a = await appendRun(store, runSpec({ runId: "run-a", estimator: "grpo", seed: 1 }));
    const b = await appendRun(
      store,
      runSpec({ runId: "run-b", estimator: "dr_mas", seed: 2, accuracy: 0.8 }),
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
            estimator: "dr_mas",
            workflow: "single",
            seed: 2,
            models: "tiny-test",
            status: "completed",
            trainable_parameters: 20000,
          },
        ],
      );
      // avg@k per benchmark recomputed from the appended evaluation events.
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
      await appendRun(store, runSpec({ runId: "run-a" }));
      const first = await catchUp(incremental, store, { batchSize: 37 });
      await appendRun(store, runSpec({ runId: "run-b", estimator: "dr_mas", seed: 5 }));
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
    await appendRun(store, runSpec({ runId: "run-a", steps: 1 }));
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
