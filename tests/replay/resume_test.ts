import assert from "node:assert/strict";
import { join } from "node:path";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { loadConfig } from "../../engine/config/mod.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import { type NewEvent, openStore, type StoredEvent } from "../../events/mod.ts";
import { randomModel, tinyConfigInput } from "./tiny-run.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const RUN = "run-k";

async function readLog(path: string): Promise<StoredEvent<NewEvent>[]> {
  await using store = await openStore(path);
  const out: StoredEvent<NewEvent>[] = [];
  for await (const e of store.readStream(RUN)) out.push(e as StoredEvent<NewEvent>);
  return out;
}

/**
 * Runs `deno task train ARGS` as a child and SIGKILLs it once the run's stream holds at least
 * `killAt` events; returns whether it was killed (false: it finished first) and its stdout.
 */
async function trainUntil(args: string[], store: string, killAt: number | null) {
  const child = new Deno.Command("deno", {
    args: ["run", "-A", "engine/cli/train.ts", ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  let killed = false;
  if (killAt !== null) {
    const watch = (async () => {
      while (!killed) {
        await new Promise((r) => setTimeout(r, 40));
        try {
          await using s = await openStore(store);
          if (await s.streamVersion(RUN) >= killAt) {
            child.kill("SIGKILL");
            killed = true;
          }
        } catch {
          // The child may not have created the store yet.
        }
      }
    })();
    const status = await child.status;
    killed = true;
    await watch;
    const out = await output;
    const text = new TextDecoder().decode(out.stdout);
    return {
      killed: status.signal === "SIGKILL",
      stdout: text,
      stderr: new TextDecoder().decode(out.stderr),
    };
  }
  const out = await output;
  return {
    killed: false,
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("train --resume after SIGKILLs ends with the uninterrupted run's log and parameters", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const model = await randomModel(tmp);
    const dir = join(tmp, "run");
    const path = join(dir, "events.sqlite");
    const file = join(tmp, "config.json");
    await Deno.writeTextFile(file, JSON.stringify(tinyConfigInput(model, path, 3)));

    // The uninterrupted reference, at the same store path so that even run.started (whose config
    // names the store) and hence every chain hash must agree; then moved aside.
    await Deno.mkdir(dir);
    const runtime = await openRuntime("cpu", { threads: 1 });
    let reference;
    try {
      await using store = await openStore(path);
      reference = await runTraining(await loadConfig({ file }), { store, runtime, runId: RUN });
    } finally {
      await runtime.close();
    }
    const refPath = join(tmp, "ref", "events.sqlite");
    await Deno.rename(dir, join(tmp, "ref"));
    const expected = await readLog(refPath);
    const at = (type: string, step: number) =>
      expected.find((e) => e.type === type && (e.data as { step?: number }).step === step)!.version;

    // Kill points: after step 0's rollouts (inside its update, before any checkpoint), after
    // step 1's checkpoint has been logged partway into step 2, then run to the end.
    const first = await trainUntil(
      ["--config", file, "--run-id", RUN],
      path,
      at("advantages.computed", 0),
    );
    assert.ok(first.killed, `the first child finished before it was killed: ${first.stderr}`);
    const second = await trainUntil(
      ["--resume", RUN, "--store", path],
      path,
      at("step.started", 2),
    );
    assert.ok(second.killed, `the resumed child finished before it was killed: ${second.stderr}`);
    const partial = await readLog(path);
    assert.ok(partial.length < expected.length);
    assert.ok(!partial.some((e) => e.type === "run.completed"));

    const last = await trainUntil(["--resume", RUN, "--store", path], path, null);
    assert.equal(last.code, 0, last.stderr);
    assert.match(last.stderr, /resumed from the checkpoint of step [0-9]/);
    for (const [wg, hash] of Object.entries(reference.parameterHashes)) {
      assert.match(last.stdout, new RegExp(`final parameters ${wg} +${hash}`));
    }

    const actual = await readLog(path);
    const rows = (log: StoredEvent<NewEvent>[]) =>
      log.map((e) => `${e.version} ${e.type} ${e.id} ${e.hash}`);
    assert.deepEqual(rows(actual), rows(expected));
    await using store = await openStore(path);
    assert.equal((await store.verify({ stream: RUN })).ok, true);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
