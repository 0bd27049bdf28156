/**
 * `deno task train` as scripts use it, run as a child process on a tiny config: `--format json`
 * prints only JSON on stdout, a closed output pipe does not stop the run, and a model path that
 * does not hold a model is refused (exit 1, naming the agent) before any run is recorded.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openStore } from "../../events/mod.ts";
import { randomModel, tinyConfigInput } from "../replay/tiny-run.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const TRAIN = ["run", "-A", "engine/cli/train.ts"];

/** A tiny two-step config file under `dir` whose every agent uses `model`. */
async function configFile(dir: string, model: string, store: string): Promise<string> {
  const path = join(dir, `config-${crypto.randomUUID().slice(0, 6)}.json`);
  await Deno.writeTextFile(path, JSON.stringify(tinyConfigInput(model, store, 2)));
  return path;
}

async function train(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...TRAIN, ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

/** The event types of `run`'s stream, or [] when the store (or the stream) does not exist. */
async function eventTypes(storePath: string, run: string): Promise<string[]> {
  try {
    await Deno.stat(storePath);
  } catch {
    return [];
  }
  await using store = await openStore(storePath);
  const types: string[] = [];
  for await (const e of store.readStream(run)) types.push(e.type);
  return types;
}

Deno.test("train: --format json prints only JSON on stdout; a table starts with the run id", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const model = await randomModel(tmp);
    const store = join(tmp, "events.sqlite");
    const json = await train(
      "--config",
      await configFile(tmp, model, store),
      "--run-id",
      "js",
      "--format",
      "json",
    );
    assert.equal(json.code, 0, json.stderr);
    const result = JSON.parse(json.stdout) as { runId: string; steps: number };
    assert.equal(result.runId, "js");
    assert.equal(result.steps, 2);
    assert.match(json.stderr, /^run id: js$/m);

    const table = await train("--config", await configFile(tmp, model, store), "--run-id", "tb");
    assert.equal(table.code, 0, table.stderr);
    assert.equal(table.stdout.split("\n")[0], "run id: tb");
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("train: a closed output pipe (train 2>&1 | head -2) does not stop the run", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const store = join(tmp, "events.sqlite");
    const config = await configFile(tmp, await randomModel(tmp), store);
    // Through a shell, as a user's pipe is: stdout and stderr (progress lines) into one pipe.
    const command = [Deno.execPath(), ...TRAIN, "--config", config, "--run-id", "piped"]
      .map((a) => `'${a}'`).join(" ");
    const child = new Deno.Command("sh", {
      args: ["-c", `exec ${command} 2>&1`],
      cwd: ROOT,
      stdout: "piped",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (text.split("\n").length <= 2) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    await reader.cancel(); // closes the pipe, as head does after its lines
    const status = await child.status;
    assert.equal(status.code, 0, text);
    const types = await eventTypes(store, "piped");
    assert.equal(types.at(-1), "run.completed");
    assert.ok(!types.includes("run.failed"));
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("train: a mistyped or incomplete model directory exits 2 before a run is recorded", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const store = join(tmp, "events.sqlite");
    const typo = join(tmp, "modle");
    const missing = await train("--config", await configFile(tmp, typo, store), "--run-id", "a");
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, new RegExp(`agent solver: model ${typo} is not a directory`));
    assert.doesNotMatch(missing.stdout, /run id/);
    assert.deepEqual(await eventTypes(store, "a"), []);

    const model = await randomModel(tmp);
    await Deno.remove(join(model, "tokenizer.json"));
    const partial = await train("--config", await configFile(tmp, model, store), "--run-id", "b");
    assert.equal(partial.code, 2, partial.stderr);
    assert.match(
      partial.stderr,
      new RegExp(`agent solver: model directory ${model} has no tokenizer.json`),
    );
    assert.deepEqual(await eventTypes(store, "b"), []);

    // Files that are there but do not load: the run is still not recorded.
    await Deno.writeTextFile(join(model, "tokenizer.json"), "{}");
    await Deno.writeTextFile(join(model, "config.json"), "{");
    const broken = await train("--config", await configFile(tmp, model, store), "--run-id", "c");
    assert.equal(broken.code, 2, broken.stderr);
    assert.match(broken.stderr, /config\.json.* is not valid JSON/);
    assert.deepEqual(await eventTypes(store, "c"), []);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
