/**
 * A store's identity: a random id written once when the store is made (on both backends), the
 * same on every later open, another for a store made again at the same path; a store made before
 * ids existed gets one when next opened for writing, and reads as id null (untouched) when opened
 * read-only. `eventHash` gives the stored hash at a position.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { openStore } from "../../events/mod.ts";
import { fingerprint, smallStore, withTempDir } from "../security/store-helpers.ts";
import { storeKinds } from "./stores.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

for (const { kind, make, ignore } of storeKinds) {
  Deno.test({
    name: `${kind}: the store id is written once and survives reopening`,
    ignore,
    async fn() {
      const t = await make();
      try {
        await smallStore(t.target, ["run-a"]);
        const first = await openStore(t.target, { readOnly: true });
        const id = first.storeId;
        const lastHash = (await Array.fromAsync(first.readAll())).at(-1)!.hash;
        assert.equal(await first.eventHash(6), lastHash);
        assert.equal(await first.eventHash(7), undefined);
        assert.equal(await first.eventHash(0), undefined);
        await first.close();
        assert.match(id ?? "", UUID);
        const again = await openStore(t.target);
        assert.equal(again.storeId, id);
        await again.close();
      } finally {
        await t.dispose();
      }
    },
  });
}

Deno.test("sqlite: a store made again at the same path has another id", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/events.sqlite`;
    await smallStore(path, ["run-a"]);
    const a = await openStore(path, { readOnly: true });
    const idA = a.storeId;
    await a.close();
    await Deno.remove(path);
    await smallStore(path, ["run-a"]);
    const b = await openStore(path, { readOnly: true });
    assert.notEqual(b.storeId, idA);
    await b.close();
  });
});

Deno.test("sqlite: a store made before store ids gets one when opened for writing", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/events.sqlite`;
    await smallStore(path, ["run-a"]);
    // Back to the schema of version 1, as older code left it.
    const db = new DatabaseSync(path);
    db.exec(
      "DROP TABLE store_meta; DROP TABLE run_leases; DELETE FROM kysely_migration " +
        "WHERE name IN ('0002_store_meta', '0003_run_leases')",
    );
    db.close();
    const before = await fingerprint(dir);
    const reading = await openStore(path, { readOnly: true });
    assert.equal(reading.storeId, null);
    assert.equal(await reading.lastPosition(), 6);
    await reading.close();
    assert.equal((await fingerprint(dir))["events.sqlite"], before["events.sqlite"]);
    const writing = await openStore(path);
    assert.match(writing.storeId ?? "", UUID);
    assert.equal((await writing.verify()).ok, true);
    await writing.close();
  });
});
