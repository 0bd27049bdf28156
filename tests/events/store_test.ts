/**
 * The shared EventStore suite, run against each store (SQLite always; Postgres when
 * POLYRL_TEST_POSTGRES_URL is set).
 */
import assert from "node:assert/strict";
import {
  EventIdConflictError,
  openStore,
  type RecordedEvent,
  WrongExpectedVersionError,
} from "../../events/mod.ts";
import { snapshot, storeKinds, withStore } from "./stores.ts";
import { runStartedEvent, stepEvent, turnEvent } from "./sample-events.ts";

const turns = (n: number, step = 0) =>
  Array.from({ length: n }, (_, i) => turnEvent({ step, prompt: 0, sample: 0, turn: i }));

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

for (const { kind, make, ignore } of storeKinds) {
  const test = (name: string, fn: Parameters<typeof withStore>[1]) =>
    Deno.test({ name: `${kind}: ${name}`, ignore, fn: () => withStore(make, fn) });

  test("append then read back identical data, typed arrays included", async (store) => {
    const events = [runStartedEvent(), stepEvent(0), ...turns(3)];
    const r = await store.append("run-a", events, { expectedVersion: 0 });
    assert.equal(r.version, 5);
    assert.equal(r.position, 5);
    assert.deepEqual(r.appended.map((a) => a.version), [1, 2, 3, 4, 5]);
    const read = await collect(store.readStream("run-a"));
    assert.deepEqual(read.map((e) => ({ type: e.type, data: e.data })), events);
    const turn = read[2] as RecordedEvent<"turn.generated">;
    assert.ok(turn.data.logprobs instanceof Float32Array);
    assert.ok(turn.data.promptTokens instanceof Int32Array);
    assert.equal(turn.schemaVersion, 2);
    assert.equal(await store.streamVersion("run-a"), 5);
    assert.equal(await store.streamVersion("nothing"), 0);
  });

  test("wrong expected version is a typed conflict and changes nothing", async (store) => {
    await store.append("run-a", [stepEvent(0)], { expectedVersion: 0 });
    const before = await snapshot(store);
    await assert.rejects(
      store.append("run-a", [stepEvent(1)], { expectedVersion: 0 }),
      (err: unknown) =>
        err instanceof WrongExpectedVersionError && err.expected === 0 && err.actual === 1 &&
        err.stream === "run-a",
    );
    await assert.rejects(
      store.append("run-b", [stepEvent(1)], { expectedVersion: 2 }),
      WrongExpectedVersionError,
    );
    assert.deepEqual(await snapshot(store), before);
  });

  test("re-appending identical events is a no-op, also counted by expectedVersion", async (store) => {
    const first = await store.append("run-a", turns(3), { expectedVersion: 0 });
    const again = await store.append("run-a", turns(3), { expectedVersion: 0 });
    assert.equal(again.appended.length, 0);
    assert.deepEqual(again.skipped, first.appended.map((a) => a.id));
    assert.equal(again.version, 3);
    // A batch that overlaps the stream's tail: the duplicates are skipped, the rest appended.
    const resumed = await store.append("run-a", turns(5).slice(2), { expectedVersion: 2 });
    assert.deepEqual(resumed.appended.map((a) => a.version), [4, 5]);
    assert.equal(resumed.skipped.length, 1);
    assert.equal((await snapshot(store)).length, 5);
  });

  test("a different event under an existing id is rejected", async (store) => {
    const [original] = turns(1);
    const r = await store.append("run-a", [original]);
    const altered = structuredClone(original) as typeof original & { data: { text: string } };
    altered.data.text = "something else";
    const before = await snapshot(store);
    await assert.rejects(
      store.append("run-a", [stepEvent(9), altered]),
      (err: unknown) =>
        err instanceof EventIdConflictError && err.id === r.appended[0].id &&
        err.existingPosition === 1,
    );
    await assert.rejects(store.append("run-b", [altered, original]), EventIdConflictError);
    assert.deepEqual(await snapshot(store), before);
  });

  test("ids derive from coordinates: same event in two runs gets two ids", async (store) => {
    const a = await store.append("run-a", [stepEvent(0)]);
    const b = await store.append("run-b", [stepEvent(0)]);
    assert.notEqual(a.appended[0].id, b.appended[0].id);
    assert.match(a.appended[0].id, /^[0-9a-f]{32}$/);
  });

  test("global positions are gap-free across streams; reads start where asked", async (store) => {
    await store.append("run-a", turns(3, 0));
    await store.append("run-b", turns(2, 0));
    await store.append("run-a", turns(2, 1));
    const all = await collect(store.readAll());
    assert.deepEqual(all.map((e) => e.position), [1, 2, 3, 4, 5, 6, 7]);
    assert.deepEqual(all.map((e) => `${e.stream}:${e.version}`), [
      "run-a:1",
      "run-a:2",
      "run-a:3",
      "run-b:1",
      "run-b:2",
      "run-a:4",
      "run-a:5",
    ]);
    assert.deepEqual((await collect(store.readAll({ from: 5 }))).map((e) => e.position), [5, 6, 7]);
    assert.deepEqual(
      (await collect(store.readStream("run-a", { fromVersion: 3 }))).map((e) => e.position),
      [3, 6, 7],
    );
    assert.equal(await store.lastPosition(), 7);
    assert.deepEqual((await store.streams()).map((h) => [h.stream, h.version, h.position]), [
      ["run-a", 5, 7],
      ["run-b", 2, 5],
    ]);
  });

  test("reads page through more events than one page", async (store) => {
    const many = Array.from(
      { length: 1100 },
      (_, i) => turnEvent({ step: 0, prompt: i, sample: 0, turn: 0 }),
    );
    await store.append("run-a", many);
    let n = 0;
    for await (const e of store.readAll({ from: 2 })) assert.equal(e.position, 2 + n++);
    assert.equal(n, 1099);
    assert.equal((await collect(store.readStream("run-a", { fromVersion: 600 }))).length, 501);
  });

  test("subscription catches up, then tails live appends", async (store) => {
    await store.append("run-a", turns(3));
    const stop = new AbortController();
    const seen: number[] = [];
    let caughtUpAt = -1;
    const done = (async () => {
      for await (
        const e of store.subscribe({
          from: 2,
          signal: stop.signal,
          // Appends through this store wake it at once, and abort ends it at once: a slow poll
          // must not delay either.
          pollIntervalMs: 60_000,
          onCaughtUp: (p) => (caughtUpAt = p),
        })
      ) {
        seen.push(e.position);
        if (seen.length === 5) stop.abort();
      }
    })();
    while (caughtUpAt < 0) await new Promise((r) => setTimeout(r, 5));
    assert.equal(caughtUpAt, 3);
    await store.append("run-b", turns(2));
    await store.append("run-a", turns(4).slice(3));
    await done;
    assert.deepEqual(seen, [2, 3, 4, 5, 6]);
  });

  test(
    "a subscriber in another process sees events while this one appends",
    async (store, target) => {
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          new URL("./fixtures/subscriber.ts", import.meta.url).pathname,
          target,
          "12",
          // Postgres announces appends with NOTIFY: with polling this slow, only that wakes it.
          kind === "postgres" ? "60000" : "20",
        ],
        stdout: "piped",
        stderr: "inherit",
      }).spawn();
      const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      const nextLine = async () => {
        while (!buffer.includes("\n")) {
          const { value, done } = await lines.read();
          if (done) throw new Error("subscriber exited early");
          buffer += value;
        }
        const i = buffer.indexOf("\n");
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        return line;
      };
      assert.equal(await nextLine(), "caught-up 0");
      const received: string[] = [];
      for (let step = 0; step < 4; step++) {
        await store.append("run-a", turns(3, step));
        // The child reports each event as it arrives: live tailing, not a read at exit.
        for (let i = 0; i < 3; i++) received.push(await nextLine());
      }
      assert.equal((await child.status).code, 0);
      lines.releaseLock();
      assert.deepEqual(received, Array.from({ length: 12 }, (_, i) => `event ${i + 1}`));
    },
  );

  test("blobs round-trip by SHA-256 key", async (store) => {
    const bytes = new Uint8Array(4096).map((_, i) => i * 7);
    const key = await store.blobs.put(bytes);
    assert.match(key, /^[0-9a-f]{64}$/);
    assert.equal(await store.blobs.put(bytes), key);
    assert.deepEqual(await store.blobs.get(key), bytes);
    assert.equal(await store.blobs.has(key), true);
    assert.equal(await store.blobs.check(key), "ok");
    assert.equal(await store.blobs.check("0".repeat(64)), "missing");
  });

  test("a store reopened sees the same log and continues its chain", async (store, target) => {
    const first = await store.append("run-a", turns(2));
    const again = await openStore(target);
    try {
      const next = await again.append("run-a", turns(3).slice(2), { expectedVersion: 2 });
      assert.equal(next.position, first.position + 1);
      assert.equal((await again.verify()).ok, true);
    } finally {
      await again.close();
    }
  });
}
