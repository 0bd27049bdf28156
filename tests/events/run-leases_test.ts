/**
 * Writer leases on both stores: put, renew and release replace a run's row; a read-only store
 * reads them and refuses to write one; a store made before the lease table existed reads as
 * holding none until a writer opens it; and leases never touch the log (verify, heads).
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { leaseIsLive, openStore, type RunLease, StoreReadOnlyError } from "../../events/mod.ts";
import { runStartedEvent } from "./sample-events.ts";
import { sqliteTarget, storeKinds, withStore } from "./stores.ts";

const lease = (over: Partial<RunLease> = {}): RunLease => ({
  runId: "run-a",
  host: "host-1",
  pid: 4242,
  startedAt: 1_000,
  heartbeatAt: 1_000,
  endedAt: null,
  ...over,
});

for (const { kind, make, ignore } of storeKinds) {
  Deno.test({
    name: `${kind}: leases are put, renewed and released per run, outside the log`,
    ignore,
    fn: () =>
      withStore(make, async (store, target) => {
        await store.append("run-a", [runStartedEvent()]);
        const heads = await store.streams();
        assert.deepEqual(await store.leases(), []);
        await store.putLease(lease());
        await store.putLease(lease({ heartbeatAt: 6_000 }));
        await store.putLease(lease({ runId: "run-b", host: "host-2", pid: 7 }));
        assert.deepEqual(await store.leases(), [
          lease({ heartbeatAt: 6_000 }),
          lease({ runId: "run-b", host: "host-2", pid: 7 }),
        ]);
        await store.putLease(lease({ heartbeatAt: 9_000, endedAt: 9_000 }));
        assert.equal((await store.leases())[0].endedAt, 9_000);
        assert.deepEqual(await store.streams(), heads);
        assert.ok((await store.verify()).ok);

        await using reader = await openStore(target, { readOnly: true });
        assert.equal((await reader.leases()).length, 2);
        await assert.rejects(() => reader.putLease(lease()), StoreReadOnlyError);
      }),
  });
}

Deno.test("sqlite: a store from before leases reads as none, and gets the table when written", async () => {
  const t = await sqliteTarget();
  try {
    await (await openStore(t.target)).close();
    const db = new DatabaseSync(t.target);
    db.exec("DROP TABLE run_leases; DELETE FROM kysely_migration WHERE name = '0003_run_leases'");
    db.close();
    {
      await using reader = await openStore(t.target, { readOnly: true });
      assert.deepEqual(await reader.leases(), []);
    }
    await using writer = await openStore(t.target);
    await writer.putLease(lease());
    assert.equal((await writer.leases()).length, 1);
  } finally {
    await t.dispose();
  }
});

Deno.test("leaseIsLive: released, expired elsewhere, and a gone process here are not live", async () => {
  const now = 1_000_000;
  assert.equal(await leaseIsLive(lease({ heartbeatAt: now, endedAt: now }), now), false);
  assert.equal(await leaseIsLive(lease({ heartbeatAt: now - 1_000 }), now), true);
  assert.equal(await leaseIsLive(lease({ heartbeatAt: now - 61_000 }), now), false);
  const here = Deno.hostname();
  const child = new Deno.Command("true").spawn();
  await child.status;
  assert.equal(
    await leaseIsLive(lease({ host: here, pid: child.pid, heartbeatAt: now }), now),
    false,
  );
  // This process is a live deno process: live however old its heartbeat.
  assert.equal(await leaseIsLive(lease({ host: here, pid: Deno.pid, heartbeatAt: 0 }), now), true);
});
