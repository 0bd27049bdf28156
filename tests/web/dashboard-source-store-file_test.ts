/**
 * The dashboard source over a store file its own writer keeps writing: a checkpoint of the
 * writer's appends changes the file's size and mtime, yet it is the same file and the same log,
 * so the source keeps the store it opened (live feeds on it go on) and reads the new events from
 * it. Replacing the file is web-store-swap_test.ts (tests/security/).
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { openStore } from "../../events/mod.ts";
import { openDashboardSource } from "../../web/server/dashboard-source.ts";
import { writeFakeRun } from "../support/fake-run.ts";
import { dashboardRun, RUNS } from "./fixtures/dashboard-store.ts";

Deno.test("a store file written by its own writer is the same store: the source keeps it open", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-web-store-file-" });
  try {
    const path = `${dir}/events.sqlite`;
    {
      await using writer = await openStore(path);
      await writeFakeRun(writer, dashboardRun(RUNS["grpo-s1"]));
    }
    await using source = await openDashboardSource(path, { generationIntervalMs: 0 });
    const opened = source.store;
    const runIds = () =>
      source.read(async (a) =>
        (await a.db.selectFrom("runs").select("run_id").orderBy("run_id").execute())
          .map((r) => r.run_id)
      );
    assert.deepEqual(await runIds(), ["grpo-s1"]);

    const before = await Deno.stat(path);
    {
      await using writer = await openStore(path);
      await writeFakeRun(writer, dashboardRun(RUNS["grpo-s2"]));
    }
    // What a writer's SQLite does each 1000 pages of WAL; its close cannot while a reader is on.
    const checkpointer = new DatabaseSync(path);
    checkpointer.exec("PRAGMA wal_checkpoint(PASSIVE)");
    checkpointer.close();
    const after = await Deno.stat(path);
    assert.equal(after.ino, before.ino);
    assert.ok(
      after.size !== before.size || after.mtime?.getTime() !== before.mtime?.getTime(),
      "the checkpoint wrote the file",
    );

    assert.deepEqual(await runIds(), ["grpo-s1", "grpo-s2"]);
    assert.equal(source.store, opened, "the store opened first, not one opened again");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
