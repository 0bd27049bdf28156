/**
 * End to end on the native webgpu backend: `deno task train --device webgpu --steps 2` on a
 * random embedded-architecture model of the small size (the smoke preset with 6 new tokens per
 * turn; on the software adapter the base size took twice the CPU, 66 against 32 seconds), then
 * `deno task replay` of that run on the same backend must regenerate every event identically.
 * Both commands run as child processes started with the software Vulkan of
 * $POLYRL_SOFTWARE_VULKAN (set at launch, see adapters/onnx/runtime/software-vulkan.ts); skipped,
 * saying so, only when that variable is unset (CI sets it).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { softwareVulkanEnv, softwareVulkanVariable } from "../../adapters/onnx/runtime/mod.ts";
import { randomModel, tinyConfigInput } from "../replay/tiny-run.ts";

const env = softwareVulkanEnv();
const skip = env ? null : `${softwareVulkanVariable} is unset: no Mesa 25 software Vulkan ` +
  "folder (.ci/software-vulkan.sh DIR fills one; CI sets it)";
const root = new URL("../../", import.meta.url).pathname;

/** Runs a CLI with the software Vulkan; returns its standard output and error. */
async function cli(
  script: string,
  args: readonly string[],
): Promise<{ stdout: string; stderr: string }> {
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(root, script), ...args],
    env: env!,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(result.stdout);
  const stderr = new TextDecoder().decode(result.stderr);
  assert.ok(result.success, `${script} ${args.join(" ")} failed:\n${stdout}\n${stderr}`);
  return { stdout, stderr };
}

Deno.test({
  name: skip
    ? `native webgpu: train --steps 2 replays identically (skipped: ${skip})`
    : "native webgpu: train --steps 2 replays identically",
  ignore: skip !== null,
  fn: async () => {
    const tmp = await Deno.makeTempDir({ prefix: "polyrl-native-train-" });
    try {
      const store = join(tmp, "events.sqlite");
      const config = join(tmp, "config.json");
      await Deno.writeTextFile(
        config,
        JSON.stringify(tinyConfigInput(await randomModel(tmp), store, 2)),
      );
      const train = await cli("engine/cli/train.ts", [
        "--config",
        config,
        "--device",
        "webgpu",
        "--steps",
        "2",
        "--store",
        store,
      ]);
      // The run's runtime line (standard error): the native backend, not a fallback.
      assert.match(train.stderr, /backend webgpu\b(?!-web)/);
      const replay = JSON.parse(
        (await cli("engine/cli/replay.ts", ["latest", "--store", store, "--format", "json"]))
          .stdout,
      );
      assert.equal(replay.mode, "exact", JSON.stringify(replay));
      assert.equal(replay.identicalRun, true, JSON.stringify(replay.firstDivergence));
      assert.equal(replay.identical, replay.compared);
    } finally {
      await Deno.remove(tmp, { recursive: true });
    }
  },
});
