import assert from "node:assert/strict";
import { join } from "node:path";
import { CONFIG_SCHEMA_VERSION } from "../../engine/config/mod.ts";
import { readRunLog, RunLogError } from "../../engine/trainer/run-log/run-log.ts";
import { hashConfig, openStore } from "../../events/mod.ts";
import { runStartedEvent } from "../events/sample-events.ts";

/** A store holding one run.started whose config is `edit` of the sample's. */
async function withOldRun(
  edit: (config: Record<string, unknown>) => Record<string, unknown>,
  check: (store: Awaited<ReturnType<typeof openStore>>) => Promise<void>,
): Promise<void> {
  const tmp = await Deno.makeTempDir();
  try {
    await using store = await openStore(join(tmp, "events.sqlite"));
    const started = runStartedEvent();
    if (started.type !== "run.started") throw new Error("expected run.started");
    const config = edit(started.data.config);
    await store.append("old-run", [{
      type: "run.started",
      data: { ...started.data, config, configHash: hashConfig(config) },
    }]);
    await check(store);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}

Deno.test("a run recorded under config schema 1 is refused for resume and replay", async () => {
  await withOldRun((c) => ({ ...c, schema_version: 1 }), async (store) => {
    await assert.rejects(
      () => readRunLog(store, "old-run"),
      (e) =>
        e instanceof RunLogError &&
        e.message.includes(`config schema 1, this code runs schema ${CONFIG_SCHEMA_VERSION}`) &&
        /events stay readable/.test(e.message),
    );
  });
});

Deno.test("a schema-2 run is read as schema 3 unless its estimator changed meaning", async () => {
  await withOldRun((c) => ({ ...c, schema_version: 2 }), async (store) => {
    const log = await readRunLog(store, "old-run");
    assert.equal(log.config.schema_version, CONFIG_SCHEMA_VERSION);
  });
  for (const kind of ["rloo", "reinforce++"]) {
    await withOldRun(
      (c) => ({ ...c, schema_version: 2, estimator: { ...(c.estimator as object), kind } }),
      async (store) => {
        await assert.rejects(
          () => readRunLog(store, "old-run"),
          (e) =>
            e instanceof RunLogError &&
            e.message.includes(`estimator ${kind} now takes the Dr. MAS code's numerators`) &&
            e.message.includes(`${kind}-trajectory`),
        );
      },
    );
  }
});

Deno.test("a run recorded before the dual clip, KL clamp, entropy bonus and loss micro-batches reads them as off", async () => {
  // The loss section as schema 2 (and schema 3 before these terms) recorded it.
  const oldLoss = {
    clip_eps: 0.2,
    clip_eps_low: 0.2,
    clip_eps_high: 0.2,
    kl_coef: 0,
    aggregation: "token-mean",
  };
  for (const schema of [2, 3]) {
    await withOldRun((c) => ({ ...c, loss: oldLoss, schema_version: schema }), async (store) => {
      const { config } = await readRunLog(store, "old-run");
      const { loss } = config;
      assert.deepEqual([loss.clip_ratio_c, loss.kl_clamp, loss.entropy_coeff], [0, 0, 0]);
      assert.equal(loss.clip_eps, 0.2);
      assert.equal(config.updates.micro_batch_size, null);
    });
  }
  // A run that has them keeps its own values.
  const newLoss = { ...oldLoss, clip_ratio_c: 2, kl_clamp: 5, entropy_coeff: 0.01 };
  await withOldRun(
    (c) => ({ ...c, loss: newLoss, schema_version: CONFIG_SCHEMA_VERSION }),
    async (store) => {
      const { loss } = (await readRunLog(store, "old-run")).config;
      assert.deepEqual([loss.clip_ratio_c, loss.kl_clamp, loss.entropy_coeff], [2, 5, 0.01]);
    },
  );
});
