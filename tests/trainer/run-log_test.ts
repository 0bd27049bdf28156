import assert from "node:assert/strict";
import { join } from "node:path";
import { CONFIG_SCHEMA_VERSION } from "../../engine/config/mod.ts";
import { readRunLog, RunLogError } from "../../engine/trainer/run-log.ts";
import { hashConfig, openStore } from "../../events/mod.ts";
import { runStartedEvent } from "../events/sample-events.ts";

Deno.test("a run recorded under an older config schema is refused for resume and replay", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    await using store = await openStore(join(tmp, "events.sqlite"));
    const started = runStartedEvent();
    if (started.type !== "run.started") throw new Error("expected run.started");
    const config = { ...started.data.config, schema_version: CONFIG_SCHEMA_VERSION - 1 };
    await store.append("old-run", [{
      type: "run.started",
      data: { ...started.data, config, configHash: hashConfig(config) },
    }]);
    await assert.rejects(
      () => readRunLog(store, "old-run"),
      (e) =>
        e instanceof RunLogError &&
        e.message.includes(
          `config schema ${
            CONFIG_SCHEMA_VERSION - 1
          }, this code runs schema ${CONFIG_SCHEMA_VERSION}`,
        ) &&
        /events stay readable/.test(e.message),
    );
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
