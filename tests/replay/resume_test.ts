import assert from "node:assert/strict";
import { join } from "node:path";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { loadConfig } from "../../engine/config/mod.ts";
import { randomStream, shuffle } from "../../engine/random/mod.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import {
  encodeCanonical,
  type NewEvent,
  openStore,
  sha256Hex,
  type StoredEvent,
} from "../../events/mod.ts";
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
 * Five stream lengths to kill at, each the end of one append (so the child is then inside the
 * next phase): the end of step 0's rollouts (the child is mid-update), then four drawn at random
 * (keyed, so the test is reproducible) from the later appends up to the last step's start.
 */
function killPoints(log: StoredEvent<NewEvent>[]): number[] {
  const ends = log.slice(0, -1).filter((e, i) => e.recordedAt !== log[i + 1].recordedAt)
    .map((e) => e.version);
  const midUpdate = log.findLast((e) => e.type === "advantages.computed" && e.data.step === 0)!;
  assert.ok(ends.includes(midUpdate.version));
  // Up to the last step's start: a kill later could land after the run completed.
  const lastStart = log.findLast((e) => e.type === "step.started")!.version;
  const later = ends.filter((v) => v > midUpdate.version && v <= lastStart);
  const drawn = shuffle(randomStream({ seed: 11, purpose: "kill-points" }), later).slice(0, 4);
  return [midUpdate.version, ...drawn.sort((a, b) => a - b)];
}

/**
 * Runs `deno task train ARGS` as a child and SIGKILLs it once the run's stream holds at least
 * `killAt` events; returns whether it was killed (false: it finished first) and its stdout.
 */
async function trainUntil(args: string[], store: string, killAt: number | null) {
  const child = new Deno.Command(Deno.execPath(), {
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
          // A read racing the child's commit may find the database busy; poll again.
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
    const points = killPoints(expected);
    assert.equal(points.length, 5);

    // Created here, so that the watcher never races the child to create the schema.
    await (await openStore(path)).close();
    let args = ["--config", file, "--run-id", RUN];
    for (const point of points) {
      const child = await trainUntil(args, path, point);
      assert.ok(
        child.killed,
        `the child finished before it was killed at ${point}: ${child.stderr}`,
      );
      const partial = await readLog(path);
      assert.ok(
        partial.length >= point && partial.length < expected.length,
        `killed at ${point}, the log holds ${partial.length} of ${expected.length} events`,
      );
      args = ["--resume", RUN, "--store", path];
    }
    const last = await trainUntil(args, path, null);
    assert.equal(last.code, 0, last.stderr);
    // Steps by their number in the log: the checkpoint of step s resumes at step s + 1.
    const resumedAt = last.stderr.match(/resumed at step (\d+) from the checkpoint of step (\d+)/);
    assert.ok(resumedAt, last.stderr);
    assert.equal(Number(resumedAt[1]), Number(resumedAt[2]) + 1);
    for (const [wg, hash] of Object.entries(reference.parameterHashes)) {
      assert.match(last.stdout, new RegExp(`final parameters ${wg} +${hash}`));
    }

    const actual = await readLog(path);
    // run.started names the code version; a commit landing between the reference and the killed
    // run changes it (and so every chain hash) without any event content changing.
    const code = (log: StoredEvent<NewEvent>[]) =>
      (log[0].data as { codeVersion: string }).codeVersion;
    const sameCode = code(actual) === code(expected);
    const rows = (log: StoredEvent<NewEvent>[]) =>
      log.map((e, i) => {
        const data = i === 0 ? { ...e.data, codeVersion: "" } : e.data;
        const { json, tensors } = encodeCanonical(data);
        return `${e.version} ${e.type} ${e.id} ${sha256Hex(json)} ${sha256Hex(tensors)} ` +
          (sameCode ? e.hash : "");
      });
    const got = rows(actual);
    const want = rows(expected);
    const at = want.findIndex((r, i) => got[i] !== r);
    assert.equal(at, -1, `event ${at + 1} differs:\n  got  ${got[at]}\n  want ${want[at]}`);
    assert.equal(got.length, want.length);
    await using store = await openStore(path);
    assert.equal((await store.verify({ stream: RUN })).ok, true);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
