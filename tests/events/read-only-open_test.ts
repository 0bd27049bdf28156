/**
 * Opening read-only never creates, migrates or writes: a missing path, an empty file, another
 * application's database or a missing Postgres schema is refused with a typed error, and every
 * file is byte-identical afterwards (sha256 of each file under the folder). A store opened
 * read-only reads like any other and refuses appends and blob writes.
 */
import assert from "node:assert/strict";
import pg from "pg";
import {
  NotAnEventStoreError,
  openStore,
  StoreNotFoundError,
  StoreReadOnlyError,
} from "../../events/mod.ts";
import {
  fingerprint,
  foreignDatabase,
  smallStore,
  withTempDir,
} from "../security/store-helpers.ts";
import { POSTGRES_URL, postgresSchemaExists, postgresTarget } from "./stores.ts";
import { stepEvent } from "./sample-events.ts";

Deno.test("read-only: a missing file is refused and no file or folder is made", async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(
      openStore(`${dir}/typo/runs/events.sqlite`, { readOnly: true }),
      (e: unknown) => e instanceof StoreNotFoundError && /no such file/.test(e.message),
    );
    assert.deepEqual(await fingerprint(dir), {});
  });
});

Deno.test("create: false: a missing file is refused and no folder is made", async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(
      openStore(`${dir}/typo/runs/events.sqlite`, { create: false }),
      StoreNotFoundError,
    );
    assert.deepEqual(await fingerprint(dir), {});
  });
});

Deno.test("read-only: a zero-byte file is not a store, and stays zero bytes", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeFile(`${dir}/events.sqlite`, new Uint8Array());
    const before = await fingerprint(dir);
    await assert.rejects(
      openStore(`${dir}/events.sqlite`, { readOnly: true }),
      (e: unknown) =>
        e instanceof NotAnEventStoreError &&
        e.message.startsWith(`${dir}/events.sqlite is not a polyrl event store (an empty file`),
    );
    assert.deepEqual(await fingerprint(dir), before);
  });
});

Deno.test("another application's SQLite file is refused untouched, read-only or not", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/app.db`;
    foreignDatabase(path);
    const before = await fingerprint(dir);
    for (const options of [{ readOnly: true }, {}, { create: false }]) {
      await assert.rejects(
        openStore(path, options),
        (e: unknown) =>
          e instanceof NotAnEventStoreError &&
          e.message.startsWith(
            `${path} is not a polyrl event store (no events table; it holds notes)`,
          ),
      );
      assert.deepEqual(await fingerprint(dir), before, JSON.stringify(options));
    }
  });
});

Deno.test("read-only: a store reads, refuses writes, and its file is byte-identical", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/events.sqlite`;
    await smallStore(path);
    const before = await fingerprint(dir);
    const store = await openStore(path, { readOnly: true });
    try {
      assert.equal(store.readOnly, true);
      assert.equal(await store.lastPosition(), 12);
      assert.equal((await store.verify()).ok, true);
      assert.equal((await store.streams()).length, 2);
      await assert.rejects(store.append("run-c", [stepEvent(0)]), StoreReadOnlyError);
      await assert.rejects(store.blobs.put(new Uint8Array([1, 2, 3])), StoreReadOnlyError);
    } finally {
      await store.close();
    }
    const after = await fingerprint(dir);
    assert.equal(after["events.sqlite"], before["events.sqlite"]);
    // A WAL store's readers, like any SQLite reader, use its -wal and -shm files; the store
    // file itself is unchanged and nothing else appears.
    assert.deepEqual(
      Object.keys(after).filter((f) => !/^events\.sqlite(-wal|-shm)?$/.test(f)),
      [],
    );
  });
});

Deno.test({
  name: "read-only: a missing Postgres schema is refused and not created",
  ignore: !POSTGRES_URL,
  async fn() {
    const { target, dispose } = await postgresTarget();
    const schema = new URL(target).searchParams.get("schema")!;
    try {
      for (const options of [{ readOnly: true }, { create: false }]) {
        await assert.rejects(
          openStore(target, options),
          (e: unknown) =>
            e instanceof StoreNotFoundError &&
            e.message.includes(`(schema ${schema} does not exist)`),
        );
      }
      assert.equal(await postgresSchemaExists(schema), false);
    } finally {
      await dispose();
    }
  },
});

Deno.test({
  name: "read-only: a Postgres schema of another application is refused untouched",
  ignore: !POSTGRES_URL,
  async fn() {
    const { target, dispose } = await postgresTarget();
    const schema = new URL(target).searchParams.get("schema")!;
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.notes (body text)`);
      const tables = async () =>
        (await client.query(
          "SELECT table_name FROM information_schema.tables WHERE table_schema = $1",
          [schema],
        )).rows.map((row: { table_name: string }) => row.table_name);
      for (const options of [{ readOnly: true }, {}]) {
        await assert.rejects(
          openStore(target, options),
          (e: unknown) => e instanceof NotAnEventStoreError && /it holds notes/.test(e.message),
        );
        assert.deepEqual(await tables(), ["notes"]);
      }
    } finally {
      await client.end();
      await dispose();
    }
  },
});

Deno.test({
  name: "read-only: a Postgres store reads and refuses writes",
  ignore: !POSTGRES_URL,
  async fn() {
    const { target, dispose } = await postgresTarget();
    try {
      await smallStore(target);
      const store = await openStore(target, { readOnly: true });
      try {
        assert.equal(await store.lastPosition(), 12);
        assert.equal((await store.verify()).ok, true);
        await assert.rejects(store.append("run-c", [stepEvent(0)]), StoreReadOnlyError);
        await assert.rejects(store.blobs.put(new Uint8Array([1])), StoreReadOnlyError);
      } finally {
        await store.close();
      }
    } finally {
      await dispose();
    }
  },
});
