/**
 * A run id is one harmless path segment (events/run-id.ts): `train --run-id`, `eval --run-id` and
 * the trainer refuse any other before the store is touched, and `runIdSlug` makes any stored text
 * a safe, distinct name.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import { checkRunId, isRunId, openStore, RunIdError, runIdSlug } from "../../events/mod.ts";
import { randomModel, tinyConfig } from "../replay/tiny-run.ts";
import { runCli as cli } from "../support/run-cli.ts";

const HOSTILE = "a/../../../elsewhere";

const exists = (path: string) => Deno.stat(path).then(() => true, () => false);

Deno.test("run ids: one segment of A-Z a-z 0-9 . _ -, no leading . or -, no ..", () => {
  for (const ok of ["smoke-1", "a.b_c-1", "Run_2.v3", "x".repeat(128), "_private"]) {
    assert.equal(isRunId(ok), true, ok);
    assert.equal(checkRunId(ok), ok);
  }
  for (
    const bad of [
      "",
      HOSTILE,
      "../x",
      "..",
      "a..b",
      ".hidden",
      "-rf",
      "/etc/passwd",
      "a/b",
      "a\\b",
      "a b",
      "née",
      "x".repeat(129),
    ]
  ) {
    assert.equal(isRunId(bad), false, bad);
    assert.throws(
      () => checkRunId(bad, "--run-id"),
      (e) =>
        e instanceof RunIdError && e.runId === bad &&
        e.message.startsWith(`--run-id ${JSON.stringify(bad)} is not a valid run id`),
    );
  }
});

Deno.test("runIdSlug: ids stay as they are; other text becomes a safe, distinct id", () => {
  assert.equal(runIdSlug("smoke-1"), "smoke-1");
  const slugs = [HOSTILE, "a/../../elsewhere", "a_elsewhere", "..", "/", "x".repeat(300)].map(
    runIdSlug,
  );
  for (const s of slugs) assert.equal(isRunId(s), true, s);
  assert.equal(new Set(slugs).size, slugs.length);
  assert.match(runIdSlug(HOSTILE), /^a-elsewhere-[0-9a-f]{8}$/);
});

Deno.test("train and eval refuse a traversal --run-id with exit 2, before any store exists", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const store = join(tmp, "events.sqlite");
    const train = await cli(
      "engine/cli/train.ts",
      "--preset",
      "smoke",
      "--run-id",
      HOSTILE,
      "--store",
      store,
    );
    assert.equal(train.code, 2, train.stderr);
    assert.match(
      train.stderr,
      /error: --run-id "a\/\.\.\/\.\.\/\.\.\/elsewhere" is not a valid run id: a run id is 1 to 128 characters/,
    );
    const evaluation = await cli(
      "engine/cli/eval.ts",
      "--model",
      "embedded",
      "--data",
      join(tmp, "none.jsonl"),
      "--run-id",
      "../up",
      "--store",
      store,
    );
    assert.equal(evaluation.code, 2, evaluation.stderr);
    assert.match(evaluation.stderr, /error: --run-id "\.\.\/up" is not a valid run id/);
    assert.equal(await exists(store), false, "no store was created");
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("the trainer refuses a new run with a bad id; nothing is appended", async () => {
  const tmp = await Deno.makeTempDir();
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    const path = join(tmp, "events.sqlite");
    await using store = await openStore(path);
    const config = tinyConfig(await randomModel(tmp), path, 1);
    await assert.rejects(() => runTraining(config, { store, runtime, runId: HOSTILE }), RunIdError);
    assert.deepEqual(await store.streams(), []);
  } finally {
    await runtime.close();
    await Deno.remove(tmp, { recursive: true });
  }
});
