/**
 * Counts past their bounds on the command line and in a config file are refused with exit 2,
 * naming the bound, before a run is recorded: the store gains no stream. (Before the bounds,
 * `batch_size: 1e15` hung with the run marked running and `eval --n 99999999999` crashed with
 * "Invalid array length", leaving a failed run.)
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { mergeConfig } from "../../engine/config/mod.ts";
import { openStore, type StreamHead } from "../../events/mod.ts";
import { runStartedEvent } from "../events/sample-events.ts";
import { randomModel, tinyConfigInput } from "../replay/tiny-run.ts";
import { runCli as cli } from "../support/run-cli.ts";

async function heads(path: string): Promise<readonly StreamHead[]> {
  await using store = await openStore(path);
  return await store.streams();
}

Deno.test("train and eval refuse counts past their bounds; the store gains no stream", async (t) => {
  const tmp = await Deno.makeTempDir();
  try {
    const path = join(tmp, "events.sqlite");
    {
      await using store = await openStore(path);
      await store.append("earlier", [runStartedEvent()]);
    }
    const before = await heads(path);
    const model = await randomModel(tmp);
    const configFile = async (name: string, override: Record<string, unknown>) => {
      const file = join(tmp, `${name}.json`);
      await Deno.writeTextFile(
        file,
        JSON.stringify(mergeConfig(tinyConfigInput(model, path, 2), override)),
      );
      return file;
    };
    const refused = async (script: string, args: string[], message: RegExp) => {
      const r = await cli(script, ...args);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.deepEqual(await heads(path), before);
    };

    await t.step("train: batch_size 1e15, batch_size * group_size, --steps", async () => {
      await refused(
        "engine/cli/train.ts",
        ["--config", await configFile("huge", { batch_size: 1e15 })],
        /batch_size = 1000000000000000 is not allowed; expected an integer <= 4096/,
      );
      await refused(
        "engine/cli/train.ts",
        ["--config", await configFile("rows", { batch_size: 64, group_size: 1024 })],
        /batch_size = 64 is not allowed; expected batch_size \* group_size <= 32768/,
      );
      await refused(
        "engine/cli/train.ts",
        ["--config", await configFile("steps", {}), "--steps", "99999999999"],
        /steps = 99999999999 is not allowed; expected an integer <= 1000000/,
      );
    });

    await t.step("eval: --n, --seeds, --max-tokens, and problems x n", async () => {
      const data = join(tmp, "bench.jsonl");
      await Deno.writeTextFile(
        data,
        Array.from(
          { length: 40 },
          (_, i) => JSON.stringify({ id: `p${i}`, problem: `${i} + 1`, answer: `${i + 1}` }),
        ).join("\n"),
      );
      const evalArgs = ["--model", model, "--data", data, "--device", "cpu", "--store", path];
      await refused(
        "engine/cli/eval.ts",
        [...evalArgs, "--n", "99999999999"],
        /error: --n must be an integer in 1\.\.1024; got 99999999999/,
      );
      await refused(
        "engine/cli/eval.ts",
        [...evalArgs, "--seeds", "100000"],
        /error: --seeds must be an integer in 1\.\.256; got 100000/,
      );
      await refused(
        "engine/cli/eval.ts",
        [...evalArgs, "--max-tokens", "1000000"],
        /error: --max-tokens must be an integer in 1\.\.32768; got 1000000/,
      );
      await refused(
        "engine/cli/eval.ts",
        [...evalArgs, "--n", "1024"],
        /error: --n 1024: 40960 episodes \(problems x n\) are more than one evaluation holds at once \(32768\)/,
      );
    });
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
