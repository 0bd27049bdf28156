/**
 * Replay of a log altered behind the store's back: an edited event type, an edit whose hash chain
 * was recomputed (so `verify` sees nothing), a tail cut with and without its head rewritten.
 * Each is named "the log was altered" with its first bad position and exits 1; none is blamed on
 * the engine.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openRuntime, type Runtime } from "../../adapters/onnx/runtime/mod.ts";
import { type ReplayReport, replayRun } from "../../engine/replay/mod.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import { openStore } from "../../events/mod.ts";
import { runStartedEvent } from "../events/sample-events.ts";
import {
  copyStore,
  editData,
  editType,
  firstOfType,
  rehashStream,
  truncateStream,
} from "../replay/tamper-log.ts";
import { randomModel, tinyConfig } from "../replay/tiny-run.ts";
import { runChild } from "../support/run-cli.ts";

/** `deno task replay run-r` on `store` as a process of its own: exit status, stdout + stderr. */
async function replayCli(store: string): Promise<{ code: number; out: string }> {
  const { code, stdout, stderr } = await runChild(
    "engine/cli/replay.ts",
    "run-r",
    "--store",
    store,
  );
  return { code, out: stdout + stderr };
}

async function replayOf(path: string, runtime: Runtime): Promise<ReplayReport> {
  await using store = await openStore(path);
  return await replayRun(store, "run-r", { runtime });
}

Deno.test("replay names an altered log, with its first bad position, and exits 1", async (t) => {
  const tmp = await Deno.makeTempDir();
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    const base = join(tmp, "events.sqlite");
    {
      await using store = await openStore(base);
      await runTraining(tinyConfig(await randomModel(tmp), base, 2), {
        store,
        runtime,
        runId: "run-r",
      });
    }
    const copy = (name: string) => copyStore(base, join(tmp, `${name}.sqlite`));

    await t.step(
      "an event's stored type edited: a type difference and a hash mismatch",
      async () => {
        const path = await copy("type");
        const at = firstOfType(path, "run-r", "worker_group.loaded");
        editType(path, at.position, "worker_group.offloaded");
        const cli = await replayCli(path);
        assert.equal(cli.code, 1, cli.out);
        assert.match(
          cli.out,
          /\(type\): recorded worker_group\.offloaded; replayed worker_group\.loaded/,
        );
        assert.match(
          cli.out,
          new RegExp(`the log was altered \\(hash-mismatch at position ${at.position},`),
        );
        assert.doesNotMatch(cli.out, /nondeterminism/);
      },
    );

    await t.step(
      "an edit with its hash chain recomputed: verify is clean, replay is not",
      async () => {
        const path = await copy("rehash");
        const at = firstOfType(path, "run-r", "evaluation.completed");
        editData(path, at.position, (d) => {
          (d.metrics as Record<string, number>)["avg@1"] = 1;
          for (const p of d.problems as { c: number }[]) p.c = 1;
        });
        rehashStream(path, "run-r");
        {
          await using store = await openStore(path);
          assert.equal((await store.verify()).ok, true, "the forged chain is self-consistent");
        }
        const cli = await replayCli(path);
        assert.equal(cli.code, 1, cli.out);
        assert.match(cli.out, /metrics\.avg@1: recorded 1; replayed 0/);
        assert.match(
          cli.out,
          new RegExp(
            `likely cause:\\n  - the log was altered \\(rehashed-edit at position ${at.position},`,
          ),
        );
        assert.doesNotMatch(cli.out, /nondeterminism/);
      },
    );

    await t.step("the tail cut and the head rewritten to match: the tail is missing", async () => {
      const path = await copy("tidy");
      const end = firstOfType(path, "run-r", "run.completed");
      truncateStream(path, "run-r", end.version - 1, true);
      const cli = await replayCli(path);
      assert.equal(cli.code, 1, cli.out);
      assert.match(
        cli.out,
        new RegExp(`the log was altered \\(tail-missing at position ${end.position},`),
      );
      assert.doesNotMatch(cli.out, /nondeterminism/);
    });

    await t.step("the tail cut, head left: verify's head mismatch", async () => {
      const path = await copy("raw");
      const end = firstOfType(path, "run-r", "run.completed");
      truncateStream(path, "run-r", end.version - 1, false);
      const report = await replayOf(path, runtime);
      assert.equal(report.ok, false);
      assert.equal(report.alteration?.problem, "head-mismatch");
      assert.equal(report.alteration?.position, end.position);
    });

    await t.step("a deeper tidy cut before a later run: the hole in the positions", async () => {
      const path = await copy("deep");
      {
        await using store = await openStore(path);
        await store.append("later", [runStartedEvent()]);
      }
      const evaluation = firstOfType(path, "run-r", "evaluation.completed");
      truncateStream(path, "run-r", evaluation.version - 1, true);
      const report = await replayOf(path, runtime);
      // What is left replays identically, but the log is not what was recorded.
      assert.equal(report.firstDivergence, null);
      assert.equal(report.ok, false);
      assert.equal(report.alteration?.problem, "position-gap");
      assert.equal(report.alteration?.position, evaluation.position);
    });
  } finally {
    await runtime.close();
    await Deno.remove(tmp, { recursive: true });
  }
});
