/**
 * A served adapter names as its base the weights the run trains on: the committed embedded model
 * for a new run, the archived directory for a run of a since-replaced one (its recorded version,
 * adapters/model/embedded-versions.ts), so that PEFT loading an adapter from `adapter_dir` finds
 * the right base.
 */
import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import {
  currentEmbeddedVersion,
  initEmbeddedModel,
  recordedEmbeddedVersion,
  saveEmbeddedModel,
  weightsSha256,
} from "../../adapters/model/mod.ts";
import { keyedNormal } from "../model/helpers.ts";
import { startServe } from "../serve/server-process.ts";
import { runInto, smokeConfig, tempFolder } from "./support.ts";

async function baseOf(adapterDir: string): Promise<string> {
  const text = await Deno.readTextFile(join(adapterDir, "adapter_config.json"));
  return JSON.parse(text).base_model_name_or_path;
}

Deno.test("served adapters name the embedded weights the run trains on: committed or archived", async () => {
  await using tmp = await tempFolder();
  await using server = await startServe("--model", "embedded", "--lora-dir", tmp.adapters);
  const rollout = { backend: "openai", endpoints: [server.url], adapter_dir: tmp.adapters };

  const fresh = await runInto(
    smokeConfig(join(tmp.root, "fresh.sqlite"), rollout, { steps: 1 }),
    "fresh",
  );
  assert.equal(fresh.error, null, String(fresh.error));
  const current = await currentEmbeddedVersion();
  assert.equal(await baseOf(join(tmp.adapters, "solver-v1")), resolve(current.dir));

  // Another embedded model, as if the committed one had been replaced and this one archived.
  const archived = join(tmp.root, "embedded-v0");
  await saveEmbeddedModel(archived, initEmbeddedModel(keyedNormal(9)));
  const sha = await weightsSha256(archived);
  const embedded = await recordedEmbeddedVersion(`embedded sha256:${sha}`, "old", [archived]);
  assert.equal(embedded.current, false);
  const old = await runInto(
    smokeConfig(join(tmp.root, "old.sqlite"), rollout, { steps: 1 }),
    "old",
    { embedded },
  );
  assert.equal(old.error, null, String(old.error));
  const initialized = old.events.find((e) => e.type === "policy.initialized");
  assert.equal(initialized?.data.source, `embedded sha256:${sha}`);
  for (const wg of ["solver", "verifier"]) {
    assert.equal(await baseOf(join(tmp.adapters, `${wg}-v1`)), resolve(archived), wg);
  }
});
