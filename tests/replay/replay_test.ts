import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { replayRun } from "../../engine/replay/mod.ts";
import { RunLogError } from "../../engine/trainer/run-log/run-log.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import { openStore } from "../../events/mod.ts";
import { copyStore } from "./tamper-log.ts";
import { randomModel, tinyConfig } from "./tiny-run.ts";
import { runCli } from "../support/run-cli.ts";

/** Rewrites one logged event's canonical JSON data in place, as an attacker or a bug would. */
function tamper(path: string, type: string, edit: (data: Record<string, unknown>) => void) {
  const db = new DatabaseSync(path);
  try {
    const row = db.prepare("SELECT id, data FROM events WHERE type = ? ORDER BY position LIMIT 1")
      .get(type) as { id: string; data: string };
    const data = JSON.parse(row.data);
    edit(data);
    db.prepare("UPDATE events SET data = ? WHERE id = ?").run(JSON.stringify(data), row.id);
  } finally {
    db.close();
  }
}

Deno.test("replay: identical run, --from/--to, tampered event and config, other backend", async (t) => {
  const tmp = await Deno.makeTempDir();
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    const model = await randomModel(tmp);
    const path = join(tmp, "events.sqlite");
    const config = tinyConfig(model, path, 2);
    {
      await using store = await openStore(path);
      await runTraining(config, { store, runtime, runId: "run-r" });
    }
    const versionBefore = await (async () => {
      await using store = await openStore(path);
      return await store.streamVersion("run-r");
    })();

    await t.step("a clean run replays identical through its last step", async () => {
      await using store = await openStore(path);
      const report = await replayRun(store, "run-r", { runtime });
      assert.equal(report.mode, "exact");
      assert.equal(report.ok, true);
      assert.equal(report.identicalRun, true);
      assert.equal(report.identicalThrough, 1);
      // Every logged event but run.started was regenerated and matched.
      assert.equal(report.compared, versionBefore - 1);
      assert.equal(report.identical, report.compared);
      // Replay writes nothing into the run's stream.
      assert.equal(await store.streamVersion("run-r"), versionBefore);
    });

    await t.step("--from restores the checkpoint (weights and AdamW state) before it", async () => {
      await using store = await openStore(path);
      const report = await replayRun(store, "run-r", { runtime, from: 1 });
      assert.equal(report.checkpointStep, 0);
      assert.equal(report.startedAt, 1);
      assert.equal(report.ok, true, JSON.stringify(report.firstDivergence));
      const head = await replayRun(store, "run-r", { runtime, to: 0 });
      assert.equal(head.ok, true);
      assert.equal(head.identicalThrough, 0);
    });

    await t.step("a tampered logged event is the first divergence, with its fields", async () => {
      const copy = await copyStore(path, join(tmp, "tampered.sqlite"));
      tamper(copy, "gradient_step.applied", (d) => {
        (d.losses as Record<string, number>).total += 0.5;
      });
      await using store = await openStore(copy);
      const report = await replayRun(store, "run-r", { runtime });
      assert.equal(report.ok, false);
      const d = report.firstDivergence!;
      assert.equal(d.type, "gradient_step.applied");
      assert.equal(d.reason, "different");
      assert.equal(d.step, 0);
      assert.equal(d.loggedDataAltered, true);
      assert.deepEqual(d.fields.map((f) => f.path), ["losses.total"]);
      assert.equal(report.identicalThrough, null);
      assert.equal(report.alteration?.problem, "hash-mismatch");
      assert.equal(report.alteration?.position, d.position);
      assert.match(report.likelyCauses[0], /^the log was altered \(hash-mismatch at position /);

      // The command says the same and exits 1.
      const cli = await runCli("engine/cli/replay.ts", "latest", "--store", copy);
      const out = cli.stdout;
      assert.equal(cli.code, 1, out);
      assert.match(out, /first divergent event #\d+ gradient_step\.applied step=0/);
      assert.match(out, /losses\.total: recorded /);
      assert.match(out, /likely cause:\n {2}- the log was altered \(hash-mismatch at position /);
    });

    await t.step("a tampered config is refused: it no longer matches its hash", async () => {
      const copy = join(tmp, "config.sqlite");
      await Deno.copyFile(path, copy);
      tamper(copy, "run.started", (d) => {
        (d.config as { seed: number }).seed += 1;
      });
      await using store = await openStore(copy);
      await assert.rejects(() => replayRun(store, "run-r", { runtime }), RunLogError);
    });

    await t.step("another backend replays with tolerances and says so", async () => {
      const wasm = await openRuntime("wasm");
      try {
        await using store = await openStore(path);
        const report = await replayRun(store, "run-r", { runtime: wasm, to: 0 });
        assert.equal(report.mode, "tolerance");
        assert.deepEqual(report.backend, { recorded: "cpu", current: wasm.info.executionProvider });
        const drift = report.drift!;
        assert.ok(drift.logprobs.compared > 0);
        assert.ok(drift.losses.compared > 0);
        assert.ok(drift.gradNorms.compared > 0);
        assert.ok(Number.isFinite(drift.logprobs.maxAbs));
        // Low bits may or may not differ; a difference, if any, is blamed on the backend.
        if (!report.identicalRun) {
          assert.ok(report.likelyCauses.some((c) => /execution provider/.test(c)));
        }
        assert.equal(await store.streamVersion("run-r"), versionBefore);
      } finally {
        await wasm.close();
      }
    });
  } finally {
    await runtime.close();
    await Deno.remove(tmp, { recursive: true });
  }
});
