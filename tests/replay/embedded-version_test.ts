/**
 * Runs record which weights "embedded" meant, so that replacing the committed embedded model
 * cannot silently change what replay, `train --resume` and evaluation of an older run load: a run
 * recorded before sources named a hash (source "embedded") still replays, one whose weights are
 * committed nowhere stops with the hash and the fix, and archived weights are found by hash.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  ARCHIVED_EMBEDDED_MODEL_DIRS,
  currentEmbeddedVersion,
  EmbeddedVersionError,
  initEmbeddedModel,
  recordedEmbeddedVersion,
  saveEmbeddedModel,
  UNVERSIONED_EMBEDDED_SHA256,
  weightsSha256,
} from "../../adapters/model/mod.ts";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { parseConfig } from "../../engine/config/mod.ts";
import { runCheckpoints } from "../../engine/evaluation/model-source.ts";
import { fillNormal, randomStream } from "../../engine/random/mod.ts";
import { replayRun } from "../../engine/replay/mod.ts";
import { resumeTraining } from "../../engine/trainer/resume-run.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import { openStore } from "../../events/mod.ts";
import { copyStore, editData, firstOfType, rehashStream, truncateStream } from "./tamper-log.ts";
import { tinyConfigInput } from "./tiny-run.ts";

const RUN = "run-embedded";

Deno.test("recorded embedded sources resolve by hash: current, unversioned, archived, or a clear error", async () => {
  const current = await currentEmbeddedVersion();
  assert.equal(current.source, `embedded sha256:${current.sha256}`);
  // The first model, which every unversioned run used, is archived in embedded-v1/.
  assert.notEqual(current.sha256, UNVERSIONED_EMBEDDED_SHA256);
  const old = await recordedEmbeddedVersion("embedded", "r");
  assert.deepEqual(
    [old.dir, old.sha256, old.source, old.current],
    [ARCHIVED_EMBEDDED_MODEL_DIRS[0].pathname, UNVERSIONED_EMBEDDED_SHA256, "embedded", false],
  );
  assert.equal(await weightsSha256(old.dir), UNVERSIONED_EMBEDDED_SHA256);
  assert.equal((await recordedEmbeddedVersion(current.source, "r")).current, true);

  const tmp = await Deno.makeTempDir();
  try {
    // A replaced model moved to an archive directory is found by its hash.
    const archived = join(tmp, "embedded-v0");
    await saveEmbeddedModel(
      archived,
      initEmbeddedModel((purpose, out, std) =>
        fillNormal(randomStream({ seed: 9, purpose }), out, { std })
      ),
    );
    const sha = await weightsSha256(archived);
    const found = await recordedEmbeddedVersion(`embedded sha256:${sha}`, "r", [archived]);
    assert.deepEqual([found.dir, found.current], [archived, false]);
    await assert.rejects(
      () => recordedEmbeddedVersion(`embedded sha256:${sha}`, "r"),
      (e) =>
        e instanceof EmbeddedVersionError && e.message.includes("run r was trained on") &&
        e.message.includes(sha.slice(0, 12)) && e.message.includes("ARCHIVED_EMBEDDED_MODEL_DIRS"),
    );
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
  await assert.rejects(() => recordedEmbeddedVersion("model.bin", "r"), EmbeddedVersionError);
});

Deno.test("a run recorded as older code recorded it replays, resumes and evaluates; lost weights are named", async (t) => {
  const tmp = await Deno.makeTempDir();
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    const path = join(tmp, "old.sqlite");
    const config = parseConfig(tinyConfigInput("embedded", path, 2));
    // What the code before versioned sources wrote: source "embedded".
    {
      await using store = await openStore(path);
      await runTraining(config, {
        store,
        runtime,
        runId: RUN,
        embedded: await recordedEmbeddedVersion("embedded", RUN),
      });
    }

    await t.step("its policies record the bare source", async () => {
      await using store = await openStore(path);
      for await (const e of store.readStream(RUN)) {
        if (e.type === "policy.initialized") assert.equal(e.data.source, "embedded");
      }
    });

    await t.step("replay regenerates the bare source and is identical", async () => {
      await using store = await openStore(path);
      const report = await replayRun(store, RUN, { runtime });
      assert.equal(report.ok, true, JSON.stringify(report.firstDivergence));
      assert.equal(report.identicalRun, true);
    });

    await t.step(
      "its checkpoints are evaluated on the committed model that has its weights",
      async () => {
        await using store = await openStore(path);
        const { checkpoints } = await runCheckpoints(store, RUN, null, "RUN");
        assert.ok(checkpoints.length > 0);
        // The first model, no longer the current one: its archive directory.
        for (const c of checkpoints) {
          assert.equal(c.model, ARCHIVED_EMBEDDED_MODEL_DIRS[0].pathname);
        }
      },
    );

    await t.step("train --resume of it, killed after step 0, ends as the whole run", async () => {
      const killed = await copyStore(path, join(tmp, "killed.sqlite"));
      {
        await using store = await openStore(killed);
        let secondStep = 0;
        for await (const e of store.readStream(RUN)) {
          if (e.type === "step.started" && e.data.step === 1) secondStep = e.version;
        }
        assert.ok(secondStep > 0);
        truncateStream(killed, RUN, secondStep - 1, true);
      }
      await using store = await openStore(killed);
      const result = await resumeTraining(store, RUN, { runtime });
      assert.equal(result.fromStep, 1);
      await using whole = await openStore(path);
      const events = async (s: typeof store) => {
        const out = [];
        for await (const e of s.readStream(RUN)) out.push([e.type, e.data]);
        return out;
      };
      assert.deepEqual(await events(store), await events(whole));
    });

    await t.step(
      "a run on weights committed nowhere stops with the cause and the fix",
      async () => {
        const lost = await copyStore(path, join(tmp, "lost.sqlite"));
        const init = firstOfType(lost, RUN, "policy.initialized");
        editData(lost, init.position, (d) => {
          d.source = `embedded sha256:${"ab".repeat(32)}`;
        });
        rehashStream(lost, RUN);
        await using store = await openStore(lost);
        const named = (e: unknown) =>
          e instanceof EmbeddedVersionError && e.message.includes(`run ${RUN} was trained on`) &&
          e.message.includes("abababababab") && e.message.includes("ARCHIVED_EMBEDDED_MODEL_DIRS");
        await assert.rejects(() => replayRun(store, RUN, { runtime }), named);
        await assert.rejects(() => runCheckpoints(store, RUN, null, "RUN"), named);
      },
    );

    await t.step("a new run records the committed model's hash", async () => {
      const fresh = join(tmp, "new.sqlite");
      await using store = await openStore(fresh);
      await runTraining(parseConfig(tinyConfigInput("embedded", fresh, 1)), {
        store,
        runtime,
        runId: "run-new",
      });
      const { source } = await currentEmbeddedVersion();
      for await (const e of store.readStream("run-new")) {
        if (e.type === "policy.initialized") assert.equal(e.data.source, source);
      }
    });
  } finally {
    await runtime.close();
    await Deno.remove(tmp, { recursive: true });
  }
});
