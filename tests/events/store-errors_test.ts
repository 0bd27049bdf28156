/**
 * Errors that name their cause: a full disk (SQLite's `max_page_count`, and a real full tmpfs
 * where this machine allows mounts), a store from newer code, a truncated store (and a growing
 * one that is not), and each way a Postgres connection fails (refused, wrong password, unknown
 * user, missing database).
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import {
  openStore,
  StoreCorruptError,
  StoreOpenError,
  StoreVersionError,
  StoreWriteError,
} from "../../events/mod.ts";
import { immediateTransaction } from "../../events/store/sqlite-transaction.ts";
import { inspectSqliteFile } from "../../events/store/sqlite-file.ts";
import {
  canMount,
  fingerprint,
  runCommand,
  smallStore,
  withTempDir,
} from "../security/store-helpers.ts";
import { POSTGRES_URL } from "./stores.ts";

Deno.test("disk full: the append's error says the disk is full, not 'no transaction'", async () => {
  const db = new DatabaseSync(":memory:");
  try {
    db.exec("CREATE TABLE t (x BLOB)");
    db.exec("PRAGMA max_page_count = 4");
    const insert = db.prepare("INSERT INTO t VALUES (?)");
    await assert.rejects(
      immediateTransaction(db, "runs.sqlite", () => {
        for (let i = 0; i < 50; i++) insert.run(new Uint8Array(4000));
      }),
      (e: unknown) => {
        assert.ok(e instanceof StoreWriteError, String(e));
        assert.match(e.message, /^cannot write to event store runs\.sqlite: the disk is full/);
        assert.match(e.message, /free space and retry/);
        assert.doesNotMatch(e.message, /no transaction is active/);
        assert.match(String((e.cause as Error).message), /database or disk is full/);
        assert.equal(e.rollbackError, undefined);
        return true;
      },
    );
    assert.equal(db.isTransaction, false);
    assert.equal(db.prepare("SELECT count(*) AS n FROM t").get()?.n, 0);
  } finally {
    db.close();
  }
});

Deno.test("an error of the transaction's body comes back unchanged, rolled back", async () => {
  const db = new DatabaseSync(":memory:");
  try {
    db.exec("CREATE TABLE t (x)");
    const bad = new RangeError("bad batch");
    await assert.rejects(
      immediateTransaction(db, "runs.sqlite", () => {
        db.exec("INSERT INTO t VALUES (1)");
        throw bad;
      }),
      (e: unknown) => e === bad && bad.cause === undefined,
    );
    assert.equal(db.prepare("SELECT count(*) AS n FROM t").get()?.n, 0);
  } finally {
    db.close();
  }
});

Deno.test({
  name: "disk full on a real (tmpfs) disk: a clear error, and the store still verifies",
  ignore: !canMount,
  async fn() {
    await withTempDir(async (dir) => {
      const script = `${dir}/fill.ts`;
      const mod = new URL("../../events/mod.ts", import.meta.url).href;
      const sample = new URL("./sample-events.ts", import.meta.url).href;
      await Deno.writeTextFile(
        script,
        `import { openStore } from ${JSON.stringify(mod)};
import { stepEvent, turnEvent } from ${JSON.stringify(sample)};
const store = await openStore(Deno.args[0]);
try {
  for (let step = 0; step < 400; step++) {
    const turns = Array.from({ length: 8 }, (_, turn) => turnEvent({ step, prompt: 0, sample: 0, turn }));
    await store.append("run-a", [stepEvent(step), ...turns]);
  }
  console.log("no error");
} catch (err) {
  console.log(err.name + ": " + err.message);
}
const report = await store.verify();
console.log("verify ok: " + report.ok + " events: " + report.events);
await store.close();
`,
      );
      const disk = `${dir}/disk`;
      await Deno.mkdir(disk);
      const config = new URL("../../deno.json", import.meta.url).pathname;
      const out = await runCommand("unshare", [
        "-m",
        "sh",
        "-c",
        `mount -t tmpfs -o size=512k tmpfs '${disk}' && '${Deno.execPath()}' run -A ` +
        `--config '${config}' '${script}' '${disk}/events.sqlite'`,
      ]);
      assert.equal(out.code, 0, out.stderr);
      assert.match(
        out.stdout,
        /^StoreWriteError: cannot write to event store .*: the disk is full \(SQLite: database or disk is full\)/m,
      );
      assert.doesNotMatch(out.stdout, /no transaction is active/);
      assert.match(out.stdout, /^verify ok: true events: [1-9]\d*$/m);
    });
  },
});

/** Runs SQL on the store file behind the store's back. */
function raw(path: string, text: string): void {
  const db = new DatabaseSync(path);
  try {
    db.exec(text);
  } finally {
    db.close();
  }
}

Deno.test("a store from newer code: 'schema version N is newer than this code's M'", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/events.sqlite`;
    await smallStore(path);
    raw(path, "INSERT INTO kysely_migration VALUES ('0099_future', '2030-01-01T00:00:00.000Z')");
    const before = await fingerprint(dir);
    for (const options of [{ readOnly: true }, {}]) {
      await assert.rejects(
        openStore(path, options),
        (e: unknown) =>
          e instanceof StoreVersionError && e.stored === 99 && e.current === 3 &&
          e.message === `event store ${path}: store schema version 99 is newer than this ` +
              "code's 3; upgrade polyrl",
      );
    }
    assert.deepEqual(await fingerprint(dir), before);
  });
});

Deno.test("a truncated store: names the file, says truncated, says restore", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/events.sqlite`;
    await smallStore(path);
    const bytes = await Deno.readFile(path);
    for (const size of [Math.floor(bytes.length / 2), 50]) {
      await Deno.writeFile(path, bytes.subarray(0, size));
      for (const options of [{ readOnly: true }, {}]) {
        await assert.rejects(
          openStore(path, options),
          (e: unknown) =>
            e instanceof StoreCorruptError &&
            e.message.startsWith(`event store ${path} is damaged: truncated`) &&
            /restore it from a backup/.test(e.message),
        );
      }
      assert.equal((await Deno.stat(path)).size, size);
    }
  });
});

Deno.test("a store another process grows while we look is never called truncated", async () => {
  // A writer's checkpoint writes page 1 (the new page count) before the pages that grow the file,
  // and the -wal is emptied once it ends: a look at the size, then the header, then the -wal
  // could see a count from after a checkpoint and a size from before it (the mixed store's
  // `train --resume` once refused its store so).
  await withTempDir(async (dir) => {
    const path = `${dir}/events.sqlite`;
    const seconds = 3;
    const writer = new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `
        import { DatabaseSync } from "node:sqlite";
        const until = Date.now() + ${seconds * 1000};
        for (let i = 0; Date.now() < until; i++) {
          const db = new DatabaseSync(${JSON.stringify(path)});
          db.exec("PRAGMA journal_mode = WAL; CREATE TABLE IF NOT EXISTS t (b BLOB)");
          db.prepare("INSERT INTO t VALUES (?)").run(new Uint8Array(40000));
          if (i === 0) console.log("started");
          db.close(); // the last connection: checkpoint, then the -wal goes
        }`,
      ],
      stdout: "piped",
    }).spawn();
    const reader = writer.stdout.pipeThrough(new TextDecoderStream()).getReader();
    assert.equal((await reader.read()).value?.trim(), "started");
    let exited = false;
    const done = writer.status.finally(() => exited = true);
    let looks = 0;
    const refusals: string[] = [];
    for (; !exited; looks++) {
      await inspectSqliteFile(path).catch((e: Error) => refusals.push(e.message));
    }
    await reader.cancel();
    assert.ok((await done).success);
    assert.deepEqual(refusals.slice(0, 3), [], `${refusals.length} of ${looks} looks refused`);
  });
});

Deno.test("a corrupt SQLite header: damaged, restore from a backup", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/events.sqlite`;
    await smallStore(path);
    const bytes = await Deno.readFile(path);
    bytes.fill(0xff, 100, 4096); // the first page's b-tree: sqlite_master is unreadable
    await Deno.writeFile(path, bytes);
    await assert.rejects(
      openStore(path, { readOnly: true }),
      (e: unknown) =>
        e instanceof StoreCorruptError && e.message.startsWith(`event store ${path} is damaged`),
    );
  });
});

Deno.test("a page damaged behind the header: reading names the damaged store", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/events.sqlite`;
    await smallStore(path);
    const bytes = await Deno.readFile(path);
    bytes.fill(0xff, bytes.length - 4096); // the last page: event rows, not the schema
    await Deno.writeFile(path, bytes);
    const store = await openStore(path, { readOnly: true });
    try {
      await assert.rejects(
        store.verify(),
        (e: unknown) =>
          e instanceof StoreCorruptError &&
          e.message.startsWith(`event store ${path} is damaged: SQLite: database disk image`),
      );
    } finally {
      await store.close();
    }
  });
});

/** A port on 127.0.0.1 where nothing listens. */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/**
 * A Postgres stand-in that answers every startup message with the server's ErrorResponse for
 * `code` (the authentication failure of a password check, which the CI server's trust
 * authentication never raises).
 */
function refusingServer(code: string, message: string): { port: number; close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const fields = [["S", "FATAL"], ["V", "FATAL"], ["C", code], ["M", message]]
    .map(([k, v]) => `${k}${v}\0`).join("") + "\0";
  const body = new TextEncoder().encode(fields);
  const reply = new Uint8Array(5 + body.length);
  reply[0] = "E".charCodeAt(0);
  new DataView(reply.buffer).setUint32(1, 4 + body.length);
  reply.set(body, 5);
  (async () => {
    for await (const conn of listener) {
      (async () => {
        await conn.read(new Uint8Array(1024)).catch(() => null);
        await conn.write(reply).catch(() => 0);
        conn.close();
      })();
    }
  })().catch(() => {});
  return { port: (listener.addr as Deno.NetAddr).port, close: () => listener.close() };
}

const rejectsWith = (target: string, pattern: RegExp) =>
  assert.rejects(
    openStore(target, { readOnly: true }),
    (e: unknown) => e instanceof StoreOpenError && pattern.test(e.message),
  );

Deno.test("Postgres: connection refused says so, and where", async () => {
  const port = closedPort();
  await rejectsWith(
    `postgres://postgres:secret@127.0.0.1:${port}/postgres`,
    new RegExp(`connection refused at 127\\.0\\.0\\.1:${port}: no Postgres server listens there`),
  );
});

Deno.test("Postgres: a wrong password says authentication failed, without the password", async () => {
  const server = refusingServer("28P01", 'password authentication failed for user "alice"');
  try {
    const target = `postgres://alice:hunter2@127.0.0.1:${server.port}/postgres`;
    await assert.rejects(
      openStore(target, { readOnly: true }),
      (e: unknown) =>
        e instanceof StoreOpenError &&
        /password authentication failed for user alice at 127\.0\.0\.1:\d+; fix the password/
          .test(e.message) &&
        !e.message.includes("hunter2"),
    );
  } finally {
    server.close();
  }
});

Deno.test({
  name: "Postgres: a missing database and an unknown user are named",
  ignore: !POSTGRES_URL,
  async fn() {
    const url = new URL(POSTGRES_URL!);
    url.pathname = "/polyrl_no_such_database";
    await rejectsWith(
      url.toString(),
      /database polyrl_no_such_database does not exist on .*; create it \(createdb polyrl_no_such_database\)/,
    );
    const user = new URL(POSTGRES_URL!);
    user.username = "polyrl_no_such_user";
    user.password = "";
    // Trust authentication names the role; password authentication fails the password.
    await rejectsWith(
      user.toString(),
      /refuses user polyrl_no_such_user|password authentication failed for user polyrl_no_such_user/,
    );
  },
});
