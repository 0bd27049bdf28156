/**
 * `deno task train --set KEY=VALUE`, `--print-config` and `--dry-run`, through the real CLI: one
 * hyperparameter changed without copying an agent entry, the resolved config shown, a run's
 * inputs checked, and nothing written to a store by any of them.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { configHash, loadConfig, parseSetOption } from "../../engine/config/mod.ts";
import { openStore } from "../../events/mod.ts";
import { runCli } from "../support/run-cli.ts";

const TRAIN = "engine/cli/train.ts";

interface PrintedAgent {
  id: string;
  role: string;
  prompt: string;
  trainable: { kind: string; rank?: number };
  optimizer: { lr: number };
}

/** `train ARGS --print-config`, its exit checked, the printed config parsed. */
async function printedConfig(...args: string[]) {
  const out = await runCli(TRAIN, ...args, "--print-config");
  assert.equal(out.code, 0, out.stderr);
  return JSON.parse(out.stdout) as Record<string, unknown> & { agents: PrintedAgent[] };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

Deno.test("--set changes keys on dotted paths, agents by role or id, before --steps", async () => {
  const config = await printedConfig(
    "--preset",
    "smoke",
    "--set",
    "agents.solver.trainable.rank=16",
    "--set",
    "loss.kl_coef=0.01",
    "--set",
    "estimator.kind=grpo",
    "--set",
    'sampling.stop=["\\n\\n"]',
    "--set",
    "updates.micro_batch_size=null",
    "--set",
    "steps=5",
    "--steps",
    "3",
  );
  const [solver, verifier] = config.agents;
  assert.equal(solver.trainable.rank, 16);
  assert.equal(verifier.trainable.rank, 8, "the other agent keeps the preset's rank");
  assert.match(solver.prompt, /\{question\}/, "the solver keeps the rest of its entry");
  assert.equal((config.loss as { kl_coef: number }).kl_coef, 0.01);
  assert.equal((config.estimator as { kind: string }).kind, "grpo", "text that is not JSON");
  assert.deepEqual((config.sampling as { stop: string[] }).stop, ["\n\n"]);
  assert.equal(
    (config.updates as { micro_batch_size: number | null }).micro_batch_size,
    null,
    "null removes the preset's 4: the default (null) applies",
  );
  assert.equal(config.steps, 3, "--steps applies after every --set");

  // A role shared by several agents sets all of them; an id sets one.
  const debate = await printedConfig(
    "--preset",
    "debate-mada",
    "--set",
    "agents.generator.optimizer.lr=5e-5",
    "--set",
    "agents.critic-2.trainable.rank=4",
  );
  assert.deepEqual(
    debate.agents.map((a) => [a.id, a.optimizer.lr, a.trainable.rank]),
    [
      ["generator-1", 5e-5, 16],
      ["generator-2", 5e-5, 16],
      ["generator-3", 5e-5, 16],
      ["critic-1", 1e-4, 16],
      ["critic-2", 1e-4, 4],
      ["critic-3", 1e-4, 16],
    ],
  );
});

Deno.test("--print-config prints the normalized config a run would record, and opens no store", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-print-config-" });
  try {
    const store = join(tmp, "events.sqlite");
    const sets = ["agents.verifier.trainable.alpha=32", "name=tuned"];
    const printed = await printedConfig(
      "--preset",
      "smoke",
      ...sets.flatMap((s) => ["--set", s]),
      "--store",
      store,
    );
    const expected = await loadConfig({
      preset: "smoke",
      sets: sets.map(parseSetOption),
      overrides: { store },
    });
    assert.deepEqual(printed, JSON.parse(JSON.stringify(expected)));
    assert.equal(configHash(printed as never), configHash(expected));
    assert.equal(printed.schema_version, expected.schema_version);
    assert.equal(await exists(store), false, "no store is created");
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("a bad --set exits 2 naming the key and the fix, and creates no store", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-bad-set-" });
  try {
    const store = join(tmp, "events.sqlite");
    const refused = async (set: string, preset: string, expected: RegExp) => {
      const out = await runCli(TRAIN, "--preset", preset, "--set", set, "--store", store);
      assert.equal(out.code, 2, `${set}: exit ${out.code}\n${out.stderr}`);
      assert.match(out.stderr, expected, set);
      assert.match(out.stderr, /^usage: deno task train /m);
      assert.doesNotMatch(out.stdout + out.stderr, /run id/);
      assert.equal(await exists(store), false, `${set}: no store is created`);
    };
    await refused(
      "loss.kl_coeff=0.01",
      "smoke",
      /loss\.kl_coeff = 0\.01 is not allowed; expected one of the keys .*\(did you mean kl_coef\?\)/,
    );
    await refused(
      "agents.solver.trainable.rnk=16",
      "smoke",
      /agents\[0\]\.trainable\.rnk = 16 is not allowed; .*\(did you mean rank\?\)/,
    );
    await refused(
      "agents.judge.model=embedded",
      "debate-mada",
      /no agent has the id or role judge \(ids: generator-1, generator-2, generator-3, critic-1, critic-2, critic-3; roles: generator, critic\)/,
    );
    await refused("steps", "smoke", /--set = "steps" is not allowed; expected KEY=VALUE/);
    await refused("steps=-1", "smoke", /steps = -1 is not allowed/);
    await refused(
      "evaluation.benchmarks.first=test",
      "smoke",
      /evaluation\.benchmarks is a list; set evaluation\.benchmarks itself/,
    );
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("extends merges agents by id or role, appends new ones, and replaces on request", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-extends-agents-" });
  try {
    const file = join(tmp, "exp.json");
    const write = (config: unknown) => Deno.writeTextFile(file, JSON.stringify(config));
    const smoke = await printedConfig("--preset", "smoke");

    // The case: one LoRA rank changed, with neither the agent's role nor its prompt.
    await write({ extends: "smoke", agents: [{ id: "solver", trainable: { rank: 16 } }] });
    const byId = await printedConfig("--config", file);
    assert.deepEqual(byId.agents.map((a) => [a.id, a.trainable.rank]), [
      ["solver", 16],
      ["verifier", 8],
    ]);
    assert.equal(byId.agents[0].prompt, smoke.agents[0].prompt);

    await write({
      extends: "smoke",
      agents: [
        { role: "verifier", trainable: { rank: 4 } },
        { id: "checker", role: "verifier", prompt: "{question} {solution}", model: "embedded" },
      ],
    });
    const byRole = await printedConfig("--config", file);
    assert.deepEqual(byRole.agents.map((a) => [a.id, a.role, a.trainable.rank]), [
      ["solver", "solver", 8],
      ["verifier", "verifier", 4],
      ["checker", "verifier", 8],
    ]);

    await write({
      extends: "debate-mada",
      workflow: { rounds: 1, critics: 0 },
      agents: {
        replace: [{ id: "g", role: "generator", prompt: "{question}", model: "embedded" }],
      },
    });
    const replaced = await printedConfig("--config", file);
    assert.deepEqual(replaced.agents.map((a) => a.id), ["g"]);

    // The study's one-round debate drops the preset's critics with the marker.
    const r1 = await printedConfig("--config", "study/debate-mada-r1.json");
    assert.deepEqual(r1.agents.map((a) => a.id), ["generator-1", "generator-2", "generator-3"]);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("--dry-run checks the models and tasks, prints a summary and records nothing", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-dry-run-" });
  try {
    const fresh = join(tmp, "fresh.sqlite");
    const ok = await runCli(
      TRAIN,
      "--preset",
      "smoke",
      "--set",
      "agents.solver.trainable.rank=16",
      "--dry-run",
      "--store",
      fresh,
    );
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^dry run of smoke: config, models and tasks check out/m);
    assert.match(ok.stdout, /^tasks synthetic-math: 8 train, 4 validation, 4 test problems$/m);
    assert.match(ok.stdout, /^ {2}solver: role solver, model embedded, lora rank 16 alpha 16/m);
    assert.doesNotMatch(ok.stdout + ok.stderr, /run id/);
    assert.deepEqual([...Deno.readDirSync(tmp)], [], "no store file, no side file");

    // An existing store stays byte for byte what it was.
    const existing = join(tmp, "existing.sqlite");
    await (await openStore(existing, { create: true })).close();
    const files = () => [...Deno.readDirSync(tmp)].map((e) => e.name).sort();
    const before = { files: files(), bytes: await Deno.readFile(existing) };
    const again = await runCli(TRAIN, "--preset", "smoke", "--dry-run", "--store", existing);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(files(), before.files);
    assert.deepEqual(await Deno.readFile(existing), before.bytes);

    // A model that does not exist is found by the dry run, as by a run: exit 2, no store.
    const missing = join(tmp, "no-model");
    const bad = await runCli(
      TRAIN,
      "--preset",
      "smoke",
      "--set",
      `agents.verifier.model=${missing}`,
      "--dry-run",
      "--store",
      fresh,
    );
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, new RegExp(`agent verifier: model ${missing} is not a directory`));
    assert.equal(await exists(fresh), false);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("--help shows --set, --print-config and --dry-run with examples; --resume refuses them", async () => {
  const help = (await runCli(TRAIN, "--help")).stdout;
  assert.match(help, /^ {2}--set KEY=VALUE +set one config key on a dotted path/m);
  assert.match(help, /^ {2}--print-config +print the resolved config as JSON/m);
  assert.match(help, /^ {2}--dry-run +check the config, every agent's model and the tasks/m);
  const examples = help.slice(help.indexOf("examples:"));
  for (const flag of ["--set agents.solver.trainable.rank=16", "--print-config", "--dry-run"]) {
    assert.ok(examples.includes(flag), `an example shows ${flag}`);
  }
  const resume = await runCli(TRAIN, "--resume", "latest", "--set", "steps=3", "--dry-run");
  assert.equal(resume.code, 2, resume.stderr);
  assert.match(resume.stderr, /drop --set, --dry-run/);
});
