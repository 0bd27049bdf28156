/**
 * `deno task bench events`: append throughput of the SQLite store (validation, canonical
 * encoding, ids, hashing and chaining included) against a bare `node:sqlite` insert loop writing
 * the same rows into the same schema with no validation or hashing, and read-all throughput.
 *
 * Both append paths write the same batches, one transaction each, into fresh files with the same
 * pragmas. They alternate batch by batch, so load from other processes on a shared machine hits
 * both alike. Each path's time is the sum over its batches, as wall clock and as CPU time of the
 * process (user + system); on a machine shared with other work the CPU-time ratio is the steadier
 * figure, since it does not count time spent waiting for a core.
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { cpuUsage } from "node:process";
import { type NewEvent, openStore } from "../../events/mod.ts";
import { seeded, turnEvent } from "../events/sample-events.ts";

const EVENTS = 6000;
const BATCH = 100;

type Row = Record<string, string | number | Uint8Array>;

function makeEvents(): NewEvent[] {
  const rand = seeded(1);
  return Array.from(
    { length: EVENTS },
    (_, i) =>
      turnEvent({ step: Math.floor(i / 64), prompt: (i >> 3) % 8, sample: i % 8, turn: 0 }, rand),
  );
}

/** The rows the store writes for `events`, read back from a scratch store. */
async function rowsOf(dir: string, events: NewEvent[]): Promise<Row[]> {
  const path = `${dir}/rows.sqlite`;
  const store = await openStore(path);
  for (let i = 0; i < events.length; i += BATCH) {
    await store.append("bench", events.slice(i, i + BATCH));
  }
  await store.close();
  const db = new DatabaseSync(path);
  const rows = db.prepare("SELECT * FROM events ORDER BY position").all() as Row[];
  db.close();
  return rows;
}

/** A bare database with the store's `events` table and indexes, and its insert statement. */
async function bareDatabase(path: string): Promise<{ db: DatabaseSync; insert: StatementSync }> {
  // The store's own migrations make the schema, so both paths write identical tables.
  await (await openStore(path)).close();
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  const insert = db.prepare(
    "INSERT INTO events (position, id, stream, version, type, schema_version, data, tensors, " +
      "hash, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  return { db, insert };
}

function bareBatch(db: DatabaseSync, insert: StatementSync, rows: Row[]): void {
  db.exec("BEGIN IMMEDIATE");
  for (const r of rows) {
    insert.run(
      r.position,
      r.id,
      r.stream,
      r.version,
      r.type,
      r.schema_version,
      r.data,
      r.tensors,
      r.hash,
      r.recorded_at,
    );
  }
  db.exec("COMMIT");
}

const cpuMs = () => {
  const { user, system } = cpuUsage();
  return (user + system) / 1000;
};

/** Wall-clock and CPU milliseconds spent in the calls it wraps, summed. */
function stopwatch() {
  const total = { wall: 0, cpu: 0 };
  return {
    total,
    async time(fn: () => unknown): Promise<void> {
      const wall = performance.now();
      const cpu = cpuMs();
      await fn();
      total.wall += performance.now() - wall;
      total.cpu += cpuMs() - cpu;
    },
  };
}

/**
 * Appends and reads the same events on the Postgres server at POLYRL_TEST_POSTGRES_URL, in a
 * scratch schema dropped afterwards; informational (no baseline), skipped when unset.
 */
async function postgresRates(events: NewEvent[]): Promise<string> {
  const url = Deno.env.get("POLYRL_TEST_POSTGRES_URL");
  if (!url) return "Postgres store: skipped (POLYRL_TEST_POSTGRES_URL unset)";
  const schema = `polyrl_bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const target = new URL(url);
  target.searchParams.set("schema", schema);
  const store = await openStore(target.toString());
  try {
    let t = performance.now();
    for (let i = 0; i < events.length; i += BATCH) {
      await store.append("bench", events.slice(i, i + BATCH));
    }
    const append = events.length / ((performance.now() - t) / 1000);
    t = performance.now();
    for await (const _ of store.readAll()) { /* decode every event */ }
    const read = events.length / ((performance.now() - t) / 1000);
    return `Postgres store: append ${append.toFixed(0)} events/s, read-all ${
      read.toFixed(0)
    } events/s`;
  } finally {
    await store.close();
    const { default: pg } = await import("pg");
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP SCHEMA ${schema} CASCADE`);
    await client.end();
  }
}

/** Runs the suite and prints its report. */
export async function run(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-bench-events-" });
  try {
    const events = makeEvents();
    const rows = await rowsOf(dir, events);
    const store = await openStore(`${dir}/store.sqlite`);
    const bare = await bareDatabase(`${dir}/bare.sqlite`);
    const storeTime = stopwatch();
    const bareTime = stopwatch();
    for (let i = 0; i < events.length; i += BATCH) {
      await storeTime.time(() => store.append("bench", events.slice(i, i + BATCH)));
      await bareTime.time(() => bareBatch(bare.db, bare.insert, rows.slice(i, i + BATCH)));
    }
    bare.db.close();
    let readMs = Infinity;
    for (let round = 0; round < 3; round++) {
      const t = performance.now();
      let n = 0;
      for await (const _ of store.readAll()) n++;
      if (n !== EVENTS) throw new Error(`read ${n} of ${EVENTS} events`);
      readMs = Math.min(readMs, performance.now() - t);
    }
    await store.close();
    const sizes = rows.map((r) => (r.data as string).length + (r.tensors as Uint8Array).length);
    const meanKb = sizes.reduce((a, b) => a + b, 0) / sizes.length / 1024;
    const rate = (ms: number) => (EVENTS / (ms / 1000)).toFixed(0).padStart(6);
    console.log(
      `${EVENTS} turn.generated events, ${meanKb.toFixed(2)} KB canonical on average ` +
        `(${Math.min(...sizes)}-${Math.max(...sizes)} B), batches of ${BATCH}`,
    );
    const line = (what: string, t: { wall: number; cpu: number }) =>
      console.log(
        `${what.padEnd(54)} ${rate(t.wall)} events/s wall, ${rate(t.cpu)} events/CPU-s`,
      );
    line("append, SQLite store (validate+encode+id+hash+chain)", storeTime.total);
    line("append, bare node:sqlite insert loop, same rows", bareTime.total);
    console.log(
      `ratio store/bare: ${(bareTime.total.wall / storeTime.total.wall).toFixed(2)} wall, ` +
        `${(bareTime.total.cpu / storeTime.total.cpu).toFixed(2)} CPU time (target >= 0.5)`,
    );
    console.log(
      `read-all, decoded and upcast (best of 3): ${rate(readMs).trim()} events/s, ` +
        `${(EVENTS / (readMs / 1000) * meanKb / 1024).toFixed(1)} MB/s`,
    );
    console.log(await postgresRates(events));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
