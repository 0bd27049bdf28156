/**
 * Tamper detection: damage the stored log behind the store's back (one byte of data, a deleted
 * row, a truncated tail, a missing or damaged blob) and check that `verify` names the right
 * position, through the library on both stores and through `deno task verify` on SQLite.
 */
import assert from "node:assert/strict";
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import pg from "pg";
import {
  BlobIntegrityError,
  type EventStore,
  type NewEvent,
  openStore,
  type VerifyReport,
} from "../../events/mod.ts";
import { runCli } from "../support/run-cli.ts";
import { storeKinds, type StoreTarget } from "./stores.ts";
import { stepEvent, turnEvent } from "./sample-events.ts";

/** Runs one SQL statement (with `?` placeholders) directly on the store's database. */
async function raw(target: string, text: string, params: SQLInputValue[] = []): Promise<unknown[]> {
  if (!target.startsWith("postgres")) {
    const db = new DatabaseSync(target);
    try {
      return db.prepare(text).all(...params);
    } finally {
      db.close();
    }
  }
  const url = new URL(target);
  const client = new pg.Client({
    connectionString: target.replace(/[?&]schema=[^&]*/, ""),
    options: `-c search_path=${url.searchParams.get("schema")}`,
  });
  await client.connect();
  try {
    let n = 0;
    return (await client.query(text.replace(/\?/g, () => `$${++n}`), params)).rows;
  } finally {
    await client.end();
  }
}

/** 12 events over three interleaved streams, the last ones in run-a. */
async function fill(store: EventStore<NewEvent>): Promise<void> {
  for (let step = 0; step < 2; step++) {
    for (const run of ["run-a", "run-b", "run-c"]) {
      await store.append(run, [
        stepEvent(step),
        turnEvent({ step, prompt: 0, sample: 0, turn: 0 }),
      ]);
    }
  }
}

async function damaged(
  make: () => Promise<StoreTarget>,
  damage: (target: string, store: EventStore<NewEvent>) => Promise<void>,
): Promise<{ report: VerifyReport; target: string; dispose: () => Promise<void> }> {
  const t = await make();
  const store = await openStore(t.target);
  await fill(store);
  assert.equal((await store.verify()).ok, true);
  await damage(t.target, store);
  const report = await store.verify();
  await store.close();
  return { report, target: t.target, dispose: () => t.dispose() };
}

async function editOneByte(target: string, column: "data" | "tensors", position: number) {
  const [row] = await raw(target, `SELECT ${column} AS v FROM events WHERE position = ?`, [
    position,
  ]) as { v: string | Uint8Array }[];
  if (typeof row.v === "string") {
    const i = row.v.indexOf('"step":') + 7;
    const edited = row.v.slice(0, i) + (row.v[i] === "1" ? "2" : "1") + row.v.slice(i + 1);
    await raw(target, "UPDATE events SET data = ? WHERE position = ?", [edited, position]);
  } else {
    const bytes = new Uint8Array(row.v);
    bytes[3] ^= 0x01;
    await raw(target, "UPDATE events SET tensors = ? WHERE position = ?", [bytes, position]);
  }
}

const cases: {
  name: string;
  damage: (target: string, store: EventStore<NewEvent>) => Promise<void>;
  position: number;
  kind: string;
}[] = [
  {
    name: "one byte of an event's JSON edited",
    damage: (t) => editOneByte(t, "data", 5),
    position: 5,
    kind: "hash-mismatch",
  },
  {
    name: "one byte of an event's token bytes edited",
    damage: (t) => editOneByte(t, "tensors", 8),
    position: 8,
    kind: "hash-mismatch",
  },
  {
    name: "a row deleted",
    damage: async (t) => void await raw(t, "DELETE FROM events WHERE position = 6"),
    position: 6,
    kind: "position-gap",
  },
  {
    name: "the tail truncated",
    damage: async (t) => void await raw(t, "DELETE FROM events WHERE position > 9"),
    position: 10,
    kind: "position-gap",
  },
  {
    name: "a referenced blob missing",
    damage: async (_t, store) =>
      void await store.append("run-b", [{
        type: "checkpoint.saved",
        data: {
          step: 1,
          workerGroup: "wg0",
          blob: await store.blobs.put(new Uint8Array([1, 2, 3])),
          bytes: 3,
          parameterHash: "e".repeat(64),
          optimizerBlob: "f".repeat(64),
          format: "safetensors",
        },
      }]),
    position: 13,
    kind: "blob-missing",
  },
];

for (const { kind: storeKind, make, ignore } of storeKinds) {
  for (const c of cases) {
    Deno.test({
      name: `${storeKind}: verify reports ${c.name} at position ${c.position}`,
      ignore,
      async fn() {
        const { report, dispose } = await damaged(make, c.damage);
        try {
          assert.equal(report.ok, false);
          assert.equal(report.firstProblem?.position, c.position, JSON.stringify(report.problems));
          assert.equal(report.firstProblem?.kind, c.kind);
        } finally {
          await dispose();
        }
      },
    });
  }
}

/** Flips one bit of a stored blob: a file next to an SQLite log, a row of the Postgres table. */
async function damageBlob(target: string, key: string): Promise<void> {
  if (target.startsWith("postgres")) {
    const [row] = await raw(target, "SELECT bytes FROM blobs WHERE hash = ?", [key]) as {
      bytes: Uint8Array;
    }[];
    const bytes = new Uint8Array(row.bytes);
    bytes[0] ^= 1;
    await raw(target, "UPDATE blobs SET bytes = ? WHERE hash = ?", [bytes, key]);
    return;
  }
  const file = `${target.replace(/\.sqlite$/, "")}.blobs/${key.slice(0, 2)}/${key}`;
  const bytes = await Deno.readFile(file);
  bytes[0] ^= 1;
  await Deno.writeFile(file, bytes);
}

for (const { kind: storeKind, make, ignore } of storeKinds) {
  Deno.test({
    name: `${storeKind}: a damaged blob is reported at the event that refers to it`,
    ignore,
    async fn() {
      const { report, dispose } = await damaged(make, async (target, store) => {
        const key = await store.blobs.put(new Uint8Array(64).fill(9));
        await store.append("run-a", [{
          type: "policy.initialized",
          data: {
            workerGroup: "wg0",
            agents: ["solver"],
            model: "m",
            source: "random",
            parameterCount: 16,
            trainableParameterCount: 16,
            parameterHash: key,
            blob: key,
          },
        }]);
        await damageBlob(target, key);
        await assert.rejects(store.blobs.get(key), BlobIntegrityError);
        // Putting the same bytes again repairs the stored copy.
        await store.blobs.put(new Uint8Array(64).fill(9));
        assert.equal(await store.blobs.check(key), "ok");
        await damageBlob(target, key);
      });
      try {
        assert.equal(report.firstProblem?.kind, "blob-damaged");
        assert.equal(report.firstProblem?.position, 13);
      } finally {
        await dispose();
      }
    },
  });
}

const cli = (...args: string[]) => runCli("events/cli/verify.ts", ...args);

Deno.test("deno task verify: exit 0 when intact, 1 with the first bad position, 2 on bad usage", async () => {
  const { target, dispose } = await damaged(storeKinds[0].make, () => Promise.resolve());
  try {
    const intact = await cli("--store", target);
    assert.equal(intact.code, 0, intact.stderr);
    assert.match(intact.stdout, /events: 12/);
    await editOneByte(target, "data", 4);
    const bad = await cli("--store", target);
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /first bad position 4: stored hash does not match/);
    const json = await cli("--store", target, "--format", "json");
    assert.equal(JSON.parse(json.stdout).firstProblem.position, 4);
    const csv = await cli("run-b", "--store", target, "--format", "csv");
    assert.equal(csv.code, 1);
    assert.match(csv.stdout, /^position,kind,stream,version,reason\n4,hash-mismatch,run-b,2,/);
    const onlyA = await cli("run-a", "--store", target);
    assert.equal(onlyA.code, 0, onlyA.stdout);
    assert.equal((await cli("--store", target, "--format", "xml")).code, 2);
    assert.equal((await cli("no-such-run", "--store", target)).code, 2);
    const missing = await cli("--store", `${target}.nope`);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no such file/);
  } finally {
    await dispose();
  }
});
