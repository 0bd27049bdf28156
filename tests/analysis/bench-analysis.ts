/**
 * `deno task bench analysis`: projection ingest rate from a store of generated events against a
 * bare DuckDB appender loading the same rows, and query latency at 1M and 10M rows.
 * POLYRL_BENCH_EVENTS sets the store size (default 1,000,000 events).
 */
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { openStore } from "../../events/mod.ts";
import { eventRows } from "../../analysis/projections/event-rows.ts";
import { catchUp, ensureSchema } from "../../analysis/projections/projector.ts";
import { type TableName, TABLES } from "../../analysis/projections/schema.ts";
import { fakeRunEvents } from "../support/fake-run.ts";
import { runSpec } from "./fixtures/fill-store.ts";

const rate = (n: number, ms: number) => Math.round(n / (ms / 1000));

async function fillStore(path: string, target: number): Promise<number> {
  const store = await openStore(path);
  let n = 0;
  for (let run = 0; n < target; run++) {
    const spec = runSpec({
      runId: `bench-${run}`,
      estimator: run % 2 ? "dr-mas" : "grpo",
      seed: run,
      steps: 200,
      prompts: 8,
      groupSize: 8,
    });
    for (const batch of fakeRunEvents(spec, 5000)) {
      await store.append(spec.runId, batch);
      n += batch.length;
      if (n >= target) break;
    }
  }
  await store.close();
  return n;
}

/** The reference: DuckDB's appender used plainly, one typed call per value, one row at a time. */
async function bareAppend(
  conn: DuckDBConnection,
  buffers: ReadonlyMap<TableName, readonly (readonly unknown[])[]>,
): Promise<void> {
  for (const [name, rows] of buffers) {
    const types = TABLES[name].columnList.map(([, c]) => c.type);
    const appender = await conn.createAppender(name);
    for (const row of rows) {
      for (let i = 0; i < types.length; i++) {
        const v = row[i];
        if (v === null || v === undefined) appender.appendNull();
        else if (types[i] === "VARCHAR") appender.appendVarchar(v as string);
        else if (types[i] === "BIGINT") appender.appendBigInt(BigInt(v as number));
        else if (types[i] === "DOUBLE") appender.appendDouble(v as number);
        else appender.appendBoolean(v as boolean);
      }
      appender.endRow();
    }
    appender.closeSync();
  }
}

async function median(times: number, f: () => Promise<unknown>): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const t = performance.now();
    await f();
    ms.push(performance.now() - t);
  }
  return ms.sort((a, b) => a - b)[Math.floor(times / 2)];
}

async function ingest(dir: string, target: number): Promise<void> {
  const storePath = `${dir}/events.sqlite`;
  let t = performance.now();
  const events = await fillStore(storePath, target);
  console.log(`store filled: ${events} events in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const store = await openStore(storePath, { create: false });

  t = performance.now();
  let read = 0;
  for await (const _ of store.readAll()) read++;
  const readMs = performance.now() - t;

  const projected = await DuckDBInstance.create(`${dir}/projection.duckdb`);
  const pconn = await projected.connect();
  t = performance.now();
  const result = await catchUp(pconn, store);
  const projectMs = performance.now() - t;

  // The same rows, built beforehand, loaded by appenders alone: the ceiling for ingest.
  const buffers = new Map<TableName, unknown[][]>();
  for await (const e of store.readAll()) {
    for (const [table, row] of eventRows(e)) {
      let buf = buffers.get(table);
      if (!buf) buffers.set(table, buf = []);
      buf.push(row as unknown[]);
    }
  }
  const bare = await DuckDBInstance.create(`${dir}/bare.duckdb`);
  const bconn = await bare.connect();
  await ensureSchema(bconn);
  t = performance.now();
  await bconn.run("BEGIN TRANSACTION");
  await bareAppend(bconn, buffers);
  await bconn.run("COMMIT");
  const bareMs = performance.now() - t;

  const projectRate = rate(result.events, projectMs);
  const bareRate = rate(read, bareMs);
  const us = (ms: number) => `${((ms * 1000) / read).toFixed(1)} us/event`;
  console.log(`store readAll alone:      ${rate(read, readMs)} events/s (${us(readMs)})`);
  console.log(
    `projection catch-up:      ${projectRate} events/s (${us(projectMs)}; ${result.rows} rows)`,
  );
  console.log(`bare appender, same rows: ${bareRate} events/s (${us(bareMs)})`);
  console.log(
    `ingest ratio projection / bare appender: ${(projectRate / bareRate).toFixed(3)} ` +
      `(target >= 0.5); without the store's own read: ${
        (bareMs / (projectMs - readMs)).toFixed(3)
      }`,
  );
  pconn.closeSync();
  projected.closeSync();
  bconn.closeSync();
  bare.closeSync();
  await store.close();
}

const GRAD_NORM_SQL = `SELECT run_id, wg, quantile_cont(grad_norm, 0.5) AS median,
  quantile_cont(grad_norm, 0.99) AS p99, max(grad_norm) AS max,
  count(*) FILTER (WHERE NOT isfinite(grad_norm)) AS non_finite
  FROM grad_steps GROUP BY run_id, wg`;
const AVG_AT_16_SQL = `SELECT run_id, benchmark, avg_at_k, pass_at_k FROM eval_summary`;

async function queries(): Promise<void> {
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  await ensureSchema(conn);
  let have = 0;
  for (const rows of [1_000_000, 10_000_000]) {
    // Synthetic rows straight into the projection tables: 100 runs, 4 worker groups, 16 samples
    // per problem; this measures queries, not ingest.
    await conn.run(`INSERT INTO grad_steps SELECT 'run-' || (i % 100), i // 400, 'wg' || (i % 4),
      0, 'agent' || (i % 4), -0.1, '{}', CASE WHEN i % 9973 = 0 THEN 'NaN'::DOUBLE
      ELSE 1 + random() END, 1.0, '{}', 0.1, 0.01, 1.5, 1e-6, 100, false, ''
      FROM range(${have}, ${rows}) t(i)`);
    await conn.run(`INSERT INTO evals SELECT 'run-' || (i % 100), 0, 'bench' || (i % 5),
      'p' || i, 16, (hash(i) % 17)::BIGINT, 16 FROM range(${have}, ${rows}) t(i)`);
    have = rows;
    const g = await median(5, () => conn.runAndReadAll(GRAD_NORM_SQL));
    const a = await median(5, () => conn.runAndReadAll(AVG_AT_16_SQL));
    console.log(
      `${(rows / 1e6).toFixed(0)}M rows: grad-norm aggregate per run and worker group ` +
        `${g.toFixed(1)} ms; avg@16 + pass@16 per run and benchmark ${a.toFixed(1)} ms`,
    );
  }
  conn.closeSync();
  instance.closeSync();
}

/** Runs the analysis benchmark and prints its figures. */
export async function run(): Promise<void> {
  const target = Number(Deno.env.get("POLYRL_BENCH_EVENTS") ?? 1_000_000);
  const dir = await Deno.makeTempDir({ prefix: "polyrl-bench-analysis-" });
  try {
    await ingest(dir, target);
    await queries();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
