/**
 * Replay across a schema version change: a run logged with `trajectory.completed` v1 (no question,
 * no gold) replays identical under code that emits v2, judged on the v1 fields only.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { replayRun } from "../../engine/replay/mod.ts";
import { storeSink } from "../../engine/trainer/run-log/event-sink.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import { openStore } from "../../events/mod.ts";
import { asTrajectoryV1, trajectoryV1Catalogue } from "../events/fixtures/trajectory-v1.ts";
import { copyStore, editData, firstOfType, rehashStream } from "./tamper-log.ts";
import { randomModel, tinyConfig } from "./tiny-run.ts";
import { runCli } from "../support/run-cli.ts";

Deno.test("a run logged with trajectory.completed v1 replays identical under v2", async (t) => {
  const tmp = await Deno.makeTempDir();
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    const model = await randomModel(tmp);
    const path = join(tmp, "v1.sqlite");
    {
      await using store = await openStore(path, { catalogue: trajectoryV1Catalogue });
      const sink = storeSink(store, "run-v1", { fresh: true });
      await runTraining(tinyConfig(model, path, 2), {
        sink: { ...sink, append: (events) => sink.append(events.map(asTrajectoryV1)) },
        runtime,
        runId: "run-v1",
      });
    }

    await t.step(
      "the log holds v1 trajectories, read back with question and gold null",
      async () => {
        await using store = await openStore(path);
        const trajectories = [];
        for await (const e of store.readStream("run-v1")) {
          if (e.type === "trajectory.completed") trajectories.push(e);
        }
        assert.ok(trajectories.length > 0);
        for (const e of trajectories) {
          assert.equal(e.storedSchemaVersion, 1);
          assert.equal(e.schemaVersion, 2);
          assert.deepEqual([e.data.question, e.data.gold], [null, null]);
        }
        assert.equal((await store.verify()).ok, true);
      },
    );

    await t.step(
      "replay regenerates v2 events and finds them identical on the v1 fields",
      async () => {
        await using store = await openStore(path);
        const report = await replayRun(store, "run-v1", { runtime });
        assert.equal(report.ok, true, JSON.stringify(report.firstDivergence));
        assert.equal(report.identicalRun, true);
        assert.equal(report.identical, report.compared);
      },
    );

    await t.step("a changed v1 field still diverges, and only that field is reported", async () => {
      const copy = await copyStore(path, join(tmp, "edited.sqlite"));
      const { position } = firstOfType(copy, "run-v1", "trajectory.completed");
      editData(copy, position, (d) => {
        d.problemId = `${d.problemId}-edited`;
      });
      rehashStream(copy, "run-v1");
      await using store = await openStore(copy);
      const report = await replayRun(store, "run-v1", { runtime });
      assert.equal(report.ok, false);
      const d = report.firstDivergence!;
      assert.equal(d.type, "trajectory.completed");
      assert.equal(d.reason, "different");
      assert.deepEqual(d.fields.map((f) => f.path), ["problemId"]);
    });

    await t.step("the replay command exits 0 on the old log", async () => {
      const cli = await runCli("engine/cli/replay.ts", "latest", "--store", path);
      const out = cli.stdout;
      assert.equal(cli.code, 0, out);
      assert.match(out, /identical through step 1/);
    });
  } finally {
    await runtime.close();
    await Deno.remove(tmp, { recursive: true });
  }
});
