/**
 * Postgres-only: positions must become visible in order even with several writer connections.
 * A transaction that allocated position p but commits late must not let a reader see p+1 first;
 * the store prevents it by taking the append lock before allocating positions.
 */
import assert from "node:assert/strict";
import pg from "pg";
import { openStore } from "../../events/mod.ts";
import { appendLockKey } from "../../events/store/postgres-backend.ts";
import { POSTGRES_URL, postgresTarget } from "./stores.ts";
import { turnEvent } from "./sample-events.ts";

const ignore = !POSTGRES_URL;

Deno.test({
  name: "postgres: an append waits while another connection holds the append lock",
  ignore,
  async fn() {
    const t = await postgresTarget();
    const store = await openStore(t.target);
    const schema = new URL(t.target).searchParams.get("schema")!;
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock($1::bigint)", [appendLockKey(schema)]);
      let settled = false;
      const pending = store.append("run-a", [turnEvent({ step: 0, prompt: 0, sample: 0, turn: 0 })])
        .finally(() => (settled = true));
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(settled, false, "append went ahead while another transaction held the lock");
      assert.equal(await store.lastPosition(), 0);
      await client.query("COMMIT");
      assert.equal((await pending).position, 1);
    } finally {
      await client.end();
      await store.close();
      await t.dispose();
    }
  },
});

Deno.test({
  name: "postgres: two interleaved writer connections; a tailing reader never skips a position",
  ignore,
  async fn() {
    const t = await postgresTarget();
    const writers = [await openStore(t.target), await openStore(t.target)];
    const reader = await openStore(t.target);
    try {
      let writing = true;
      const seen: number[] = [];
      const tail = (async () => {
        let next = 1;
        while (writing || next <= (await reader.lastPosition())) {
          for await (const e of reader.readAll({ from: next })) {
            assert.equal(e.position, next, `reader skipped from ${next} to ${e.position}`);
            seen.push(e.position);
            next++;
          }
        }
      })();
      const rounds = 15;
      await Promise.all(writers.map(async (store, w) => {
        for (let i = 0; i < rounds; i++) {
          const batch = [0, 1].map((turn) =>
            turnEvent(
              { step: i, prompt: w, sample: 0, turn },
              () => (i * 31 + turn * 7 + w) % 97 / 97,
            )
          );
          await store.append(`run-${w}`, batch);
        }
      }));
      writing = false;
      await tail;
      const total = rounds * 2 * writers.length;
      assert.deepEqual(seen, Array.from({ length: total }, (_, i) => i + 1));
      const report = await reader.verify();
      assert.equal(report.ok, true, JSON.stringify(report.problems));
      assert.equal(report.events, total);
    } finally {
      for (const s of [...writers, reader]) await s.close();
      await t.dispose();
    }
  },
});
