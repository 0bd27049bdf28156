/**
 * `deno task train --model DIR`: every agent's model set from the command line (the common case
 * of one base model), a relative path meaning the user's directory, recorded in the run's config
 * and policies; a model that cannot load is refused before any run is recorded.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { initEmbeddedModel, saveEmbeddedModel } from "../../adapters/model/mod.ts";
import { fillNormal, randomStream } from "../../engine/random/mod.ts";
import { type NewEvent, openStore, type StoredEvent } from "../../events/mod.ts";
import { type CliResult, runCli } from "../support/run-cli.ts";

const TRAIN = new URL("../../engine/cli/train.ts", import.meta.url).pathname;
const ROOT = new URL("../..", import.meta.url).pathname;

/** `deno task train ARGS` as run from `userDir` (deno task runs in the root, INIT_CWD set). */
async function trainFrom(userDir: string, ...args: string[]): Promise<CliResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", TRAIN, ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", INIT_CWD: userDir },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

async function streamEvents(storePath: string, run: string): Promise<StoredEvent<NewEvent>[]> {
  await using store = await openStore(storePath, { create: true });
  const out: StoredEvent<NewEvent>[] = [];
  for await (const e of store.readStream(run)) out.push(e as StoredEvent<NewEvent>);
  return out;
}

Deno.test("train --model DIR: every agent on that model, recorded; bad models refused before a run", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-train-model-" });
  try {
    const model = join(tmp, "base");
    await saveEmbeddedModel(
      model,
      initEmbeddedModel((purpose, out, std) =>
        fillNormal(randomStream({ seed: 11, purpose }), out, { std })
      ),
    );
    const storePath = join(tmp, "events.sqlite");
    const common = ["--preset", "smoke", "--steps", "1", "--device", "cpu", "--store", storePath];

    const ok = await trainFrom(tmp, ...common, "--model", "base", "--run-id", "on-dir");
    assert.equal(ok.code, 0, ok.stderr);
    const events = await streamEvents(storePath, "on-dir");
    const started = events[0];
    assert.ok(started.type === "run.started");
    const config = started.data.config as {
      agents: { id: string; model: string }[];
      worker_groups: { id: string; model: string }[];
    };
    // The relative path means the directory the user ran the task from.
    assert.deepEqual(config.agents.map((a) => [a.id, a.model]), [
      ["solver", model],
      ["verifier", model],
    ]);
    assert.deepEqual(config.worker_groups.map((g) => g.model), [model, model]);
    const policies = events.filter((e) => e.type === "policy.initialized");
    assert.equal(policies.length, 2);
    for (const p of policies) assert.ok(p.type === "policy.initialized" && p.data.model === model);
    assert.equal(events.at(-1)!.type, "run.completed");

    // Refused before the store gets a run: exit 2, the flag and the path named, no run id.
    const refused = async (run: string, dir: string, expected: RegExp) => {
      const r = await trainFrom(tmp, ...common, "--model", dir, "--run-id", run);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, expected);
      assert.doesNotMatch(r.stdout, /run id/);
      assert.deepEqual(await streamEvents(storePath, run), []);
    };
    await refused(
      "typo",
      "bsae",
      new RegExp(`--model ${join(tmp, "bsae")} is not a directory \\(give "embedded" or an HF`),
    );
    const gpt2 = join(tmp, "gpt2");
    await Deno.mkdir(gpt2);
    for (const file of ["tokenizer.json", "model.safetensors"]) {
      await Deno.copyFile(join(model, file), join(gpt2, file));
    }
    await Deno.writeTextFile(
      join(gpt2, "config.json"),
      JSON.stringify({ architectures: ["GPT2LMHeadModel"], model_type: "gpt2" }),
    );
    await refused("arch", gpt2, new RegExp(`--model ${gpt2}: .*GPT2LMHeadModel`));
    await Deno.remove(join(gpt2, "tokenizer.json"));
    await refused("partial", gpt2, new RegExp(`--model directory ${gpt2} has no tokenizer.json`));

    const resume = await runCli(
      "engine/cli/train.ts",
      "--resume",
      "on-dir",
      "--model",
      model,
      "--store",
      storePath,
    );
    assert.equal(resume.code, 2, resume.stderr);
    assert.match(resume.stderr, /--resume continues a run with its recorded config; drop --model/);

    const help = await runCli("engine/cli/train.ts", "--help");
    assert.match(help.stdout, /--model DIR\|embedded\s+every agent's model/);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
