/**
 * `deno task bench events`: append throughput of the SQLite store (validation, canonical
 * encoding, hashing and chaining included) against a bare `node:sqlite` insert loop writing the
 * same rows with no validation or hashing, and read-all throughput. Both append paths write
 * batches of the same size in one transaction each, on files with the same pragmas; rounds
 * alternate so machine noise hits both alike, and the median round is reported.
 */
import { DatabaseSync } from "node:sqlite";
import { type NewEvent, openStore } from "../../events/mod.ts";
import { seeded, turnEvent } from "../events/sample-events.ts";

const EVENTS = 6000;
const BATCH = 100;
const ROUNDS = 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function makeEvents(): NewEvent[] {
  const rand = seeded(1);
  return Array.from(
    { length: EVENTS },
    (_, i) =>
      turnEvent({ step: Math.floor(i / 64), prompt: (i >> 3) % 8, sample: i % 8, turn: 0 }, rand),
  );
}

/** Appends through the store; returns events/s and the file it wrote. */
async function storeRound(dir: string, events: NewEvent[], round: number) {
  const path = `${dir}/store-${round}.sqlite`;
  const store = await openStore(path);
  const started = performance.now();
  for (let i = 0; i < events.length; i += BATCH) {
    await store.append("bench", events.slice(i, i + BATCH));
  }
  const seconds = (performance.now() - started) / 1000;
  await store.close();
  return { rate: events.length / seconds, path };
}

/** Inserts the rows the store wrote, with a prepared statement and nothing else. */
function bareRound(dir: string, rows: Record<string, unknown>[], round: number) {
  const path = `${dir}/bare-${round}.sqlite`;
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec(
    "CREATE TABLE events (position integer PRIMARY KEY, id text NOT NULL UNIQUE, " +
      "stream text NOT NULL, version integer NOT NULL, type text NOT NULL, " +
      "schema_version integer NOT NULL, data text NOT NULL, tensors blob NOT NULL, " +
      "hash text NOT NULL, recorded_at integer NOT NULL, UNIQUE (stream, version))",
  );
  db.exec("CREATE INDEX events_type_position ON events (type, position)");
  const insert = db.prepare(
    "INSERT INTO events (position, id, stream, version, type, schema_version, data, tensors, " +
      "hash, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const started = performance.now();
  for (let i = 0; i < rows.length; i += BATCH) {
    db.exec("BEGIN IMMEDIATE");
    for (const r of rows.slice(i, i + BATCH)) {
      insert.run(
        r.position as number,
        r.id as string,
        r.stream as string,
        r.version as number,
        r.type as string,
        r.schema_version as number,
        r.data as string,
        r.tensors as Uint8Array,
        r.hash as string,
        r.recorded_at as number,
      );
    }
    db.exec("COMMIT");
  }
  const seconds = (performance.now() - started) / 1000;
  db.close();
  return rows.length / seconds;
}

/** Runs the suite and prints its report. */
export async function run(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-bench-events-" });
  try {
    const events = makeEvents();
    const storeRates: number[] = [];
    const bareRates: number[] = [];
    let rows: Record<string, unknown>[] = [];
    let lastPath = "";
    for (let round = 0; round < ROUNDS; round++) {
      const s = await storeRound(dir, events, round);
      storeRates.push(s.rate);
      lastPath = s.path;
      if (rows.length === 0) {
        const db = new DatabaseSync(s.path);
        rows = db.prepare("SELECT * FROM events ORDER BY position").all() as typeof rows;
        db.close();
      }
      bareRates.push(bareRound(dir, rows, round));
    }
    const bytes = rows.reduce(
      (n, r) => n + (r.data as string).length + (r.tensors as Uint8Array).length,
      0,
    );
    const store = await openStore(lastPath, { create: false });
    const readRates: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const started = performance.now();
      let n = 0;
      for await (const _ of store.readAll()) n++;
      readRates.push(n / ((performance.now() - started) / 1000));
    }
    await store.close();
    const s = median(storeRates);
    const b = median(bareRates);
    const r = median(readRates);
    const meanKb = bytes / rows.length / 1024;
    console.log(
      `events: ${EVENTS} turn.generated events, mean ${meanKb.toFixed(2)} KB canonical, ` +
        `batches of ${BATCH}, median of ${ROUNDS} rounds`,
    );
    console.log(`append, SQLite store (validate+encode+hash+chain): ${s.toFixed(0)} events/s`);
    console.log(`append, bare node:sqlite insert loop, same rows:    ${b.toFixed(0)} events/s`);
    console.log(`ratio store/bare: ${(s / b).toFixed(2)} (target >= 0.5)`);
    console.log(
      `read-all, decoded (typed arrays rebuilt): ${r.toFixed(0)} events/s, ` +
        `${(r * meanKb / 1024).toFixed(1)} MB/s`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
