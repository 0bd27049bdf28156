/**
 * Bad input: each mistake is a clear, typed error, and the log is left exactly as it was.
 */
import assert from "node:assert/strict";
import {
  EventValidationError,
  type NewEvent,
  openStore,
  StoreOpenError,
  UnknownEventTypeError,
  WrongExpectedVersionError,
} from "../../events/mod.ts";
import { snapshot, storeKinds, withStore } from "./stores.ts";
import { stepEvent, turnEvent } from "./sample-events.ts";

const turn = turnEvent({ step: 0, prompt: 0, sample: 0, turn: 0 }) as Extract<
  NewEvent,
  { type: "turn.generated" }
>;

const badBatches: { name: string; events: unknown[]; error: (err: unknown) => boolean }[] = [
  {
    name: "a field of the wrong type",
    events: [stepEvent(1), { type: "turn.generated", data: { ...turn.data, step: "one" } }],
    error: (e) => e instanceof EventValidationError && e.field === "step",
  },
  {
    name: "a missing field",
    events: [{ type: "step.started", data: { step: 1, prompts: [] } }],
    error: (e) => e instanceof EventValidationError && e.field === "groupSize",
  },
  {
    name: "token ids as a number list",
    events: [{ type: "turn.generated", data: { ...turn.data, responseTokens: [1, 2] } }],
    error: (e) =>
      e instanceof EventValidationError && e.field === "responseTokens" &&
      /Int32Array/.test(e.message),
  },
  {
    name: "an unknown event type",
    events: [stepEvent(1), { type: "turn.genrated", data: turn.data }],
    error: (e) => e instanceof UnknownEventTypeError && /turn\.generated/.test(e.message),
  },
  {
    name: "not an event at all",
    events: [42],
    error: (e) => e instanceof EventValidationError && e.field === "events[0].type",
  },
];

for (const { kind, make, ignore } of storeKinds) {
  Deno.test({
    name: `${kind}: malformed events, unknown types and wrong versions leave the log unchanged`,
    ignore,
    fn: () =>
      withStore(make, async (store) => {
        await store.append("run-a", [stepEvent(0), turn], { expectedVersion: 0 });
        const before = await snapshot(store);
        for (const { name, events, error } of badBatches) {
          await assert.rejects(store.append("run-a", events as NewEvent[]), error, name);
        }
        await assert.rejects(
          store.append("run-a", [stepEvent(1)], { expectedVersion: 1 }),
          WrongExpectedVersionError,
        );
        await assert.rejects(
          store.append("run-a", stepEvent(1) as unknown as NewEvent[]),
          (e: unknown) => e instanceof EventValidationError && e.field === "events",
        );
        await assert.rejects(
          store.append("", [stepEvent(1)]),
          (e: unknown) => e instanceof EventValidationError && e.field === "stream",
        );
        await assert.rejects(
          store.append("run-a", [stepEvent(1)], { expectedVersion: -1 }),
          (e: unknown) => e instanceof EventValidationError && e.field === "expectedVersion",
        );
        assert.deepEqual(await snapshot(store), before);
        assert.equal((await store.verify()).ok, true);
      }),
  });
}

Deno.test("a file that is not a database is refused and left untouched", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/events.sqlite`;
    const content = new TextEncoder().encode("step,reward\n0,1.5\n".repeat(300));
    await Deno.writeFile(path, content);
    await assert.rejects(
      openStore(path),
      (e: unknown) => e instanceof StoreOpenError && /not an SQLite database/.test(e.message),
    );
    assert.deepEqual(await Deno.readFile(path), content);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a Postgres URL that does not answer is a clear error", async () => {
  const started = Date.now();
  await assert.rejects(
    openStore("postgres://postgres:secret@127.0.0.1:9/postgres"),
    (e: unknown) =>
      e instanceof StoreOpenError &&
      /connection refused at 127\.0\.0\.1:9: no Postgres server listens there/.test(e.message) &&
      !e.message.includes("secret"),
  );
  assert.ok(Date.now() - started < 10_000);
});

Deno.test("a missing store file is not created when create is false", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await assert.rejects(openStore(`${dir}/none.sqlite`, { create: false }), StoreOpenError);
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
