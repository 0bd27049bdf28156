/**
 * A custom workflow end to end: the planner-executors example (engine/workflows/examples) trains
 * on smoke settings through the real `train` CLI; its events carry its roles, its turns and its
 * module's source hash; replay re-executes it identically, and names the module when it was
 * edited after the run. A module path is taken from the config file's folder, and a config
 * whose agents do not fit the module's roles (or whose module does not load) records no run.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig } from "../../engine/config/mod.ts";
import {
  buildWorkflow,
  parseAnswerText,
  type Speak,
  type TurnRequest,
  WorkflowConfigError,
} from "../../engine/workflows/mod.ts";
import { type NewEvent, openStore, sha256Hex, type StoredEvent } from "../../events/mod.ts";
import { changedModuleText, formatReplayReport } from "../../engine/replay/mod.ts";
import { runChild, runCli } from "../support/run-cli.ts";

const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const EXAMPLE = `${ROOT}/engine/workflows/examples/planner-executors.ts`;
const EXAMPLE_CONFIG = `${ROOT}/engine/workflows/examples/planner-executors.json`;
const ROLES = ["planner", "executor", "executor"];

async function events(store: string, run: string): Promise<StoredEvent<NewEvent>[]> {
  await using s = await openStore(store, { readOnly: true });
  const out: StoredEvent<NewEvent>[] = [];
  for await (const e of s.readStream(run)) out.push(e as StoredEvent<NewEvent>);
  return out;
}

/** Whether `path` exists. */
async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/** `train --config FILE` into `store` under `run`; the CLI's result. */
function train(config: string, store: string, run: string, ...more: string[]) {
  return runCli(
    "engine/cli/train.ts",
    "--config",
    config,
    "--store",
    store,
    "--run-id",
    run,
    "--format",
    "json",
    ...more,
  );
}

/** The example module and its config copied into `dir`, the config naming it `./flow.ts`. */
async function copyExample(dir: string): Promise<{ module: string; config: string }> {
  const source = await Deno.readTextFile(EXAMPLE);
  assert.ok(source.includes(`from "../mod.ts"`), "the example imports ../mod.ts");
  const module = join(dir, "flow.ts");
  await Deno.writeTextFile(
    module,
    source.replace(`from "../mod.ts"`, `from "file://${ROOT}/engine/workflows/mod.ts"`),
  );
  const raw = JSON.parse(await Deno.readTextFile(EXAMPLE_CONFIG));
  raw.workflow.module = "./flow.ts";
  const config = join(dir, "config.json");
  await Deno.writeTextFile(config, JSON.stringify(raw));
  return { module, config };
}

Deno.test("the planner-executors example trains on smoke settings and replays identically", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const store = join(dir, "events.sqlite");
    const trained = await train(EXAMPLE_CONFIG, store, "pe");
    assert.equal(trained.code, 0, trained.stderr);
    const log = await events(store, "pe");

    const started = log.find((e) => e.type === "run.started");
    assert.ok(started?.type === "run.started");
    const sha256 = sha256Hex(await Deno.readFile(EXAMPLE));
    assert.deepEqual(started.data.workflowModule, { path: EXAMPLE, sha256 });
    // The config names the module relative to itself; the run records where it was found.
    assert.equal((started.data.config.workflow as { module: string }).module, EXAMPLE);

    const groups = log.flatMap((e) => e.type === "policy.initialized" ? [e.data.workerGroup] : []);
    assert.deepEqual(groups.sort(), ["executor_a", "executor_b", "planner"]);

    // 2 steps x 1 prompt x 2 samples, each a planner turn and one turn per executor.
    const trajectories = log.flatMap((e) =>
      e.type === "trajectory.completed" && e.data.phase === "rollout" ? [e.data] : []
    );
    assert.equal(trajectories.length, 4);
    for (const t of trajectories) {
      assert.equal(t.turns, 3);
      assert.deepEqual(t.agents, ["planner", "executor_a", "executor_b"]);
    }
    const turns = log.flatMap((e) =>
      e.type === "turn.generated" && e.data.phase === "rollout" ? [e.data] : []
    );
    assert.equal(turns.length, 12);
    for (const t of trajectories) {
      const own = turns.filter((u) => u.trajectory === t.trajectory).sort((a, b) =>
        a.turn - b.turn
      );
      assert.deepEqual(own.map((u) => u.role), ROLES);
      assert.deepEqual(own.map((u) => u.agent), ["planner", "executor_a", "executor_b"]);
      // The plan is a custom action, never graded; executor turns record the answer they gave.
      assert.equal(own[0].parsedAnswer, null);
      assert.equal(own[0].correct, null);
      for (const u of own.slice(1)) assert.equal(u.parsedAnswer, parseAnswerText(u.text));
    }

    const replayed = await runCli(
      "engine/cli/replay.ts",
      "pe",
      "--store",
      store,
      "--format",
      "json",
    );
    assert.equal(replayed.code, 0, replayed.stderr);
    const report = JSON.parse(replayed.stdout);
    assert.equal(report.identicalRun, true);
    assert.equal(report.identicalThrough, 1);
    assert.equal(report.changedModule, null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the example's turns: a plan action, then the executors' answers", async () => {
  const config = await loadConfig({ file: EXAMPLE_CONFIG });
  const workflow = await buildWorkflow(config);
  assert.deepEqual(workflow.roles, { planner: 1, executor: 2 });
  const replies: Record<string, string> = {
    planner: "plan: add the numbers, then check",
    executor_a: "The final answer is \\boxed{4}",
    executor_b: "agreed: \\boxed{4}",
  };
  const asked: TurnRequest[] = [];
  const speak: Speak<null> = (request) => {
    asked.push(request);
    return Promise.resolve({ text: replies[request.agent.id], extra: null });
  };
  const question = { id: "q", problem: "What is 2+2?", answer: "4" };
  const episode = await workflow.run(question, speak);
  assert.deepEqual(episode.turns.map((t) => [t.agent, t.action, t.valid]), [
    [
      "planner",
      { kind: "custom", name: "plan", data: { plan: "add the numbers, then check" } },
      true,
    ],
    ["executor_a", { kind: "answer", answer: "4" }, true],
    ["executor_b", { kind: "answer", answer: "4" }, true],
  ]);
  assert.equal(episode.finalAnswer, "4");
  // The second executor sees the plan and the first executor's work.
  assert.match(asked[2].prompt, /Plan: plan: add the numbers, then check/);
  assert.match(asked[2].prompt, /executor_a: The final answer is \\boxed\{4\}/);

  replies.planner = "I will just try";
  const unplanned = await workflow.run(question, speak);
  assert.deepEqual(unplanned.turns[0].action, {
    kind: "custom",
    name: "plan",
    data: { plan: null },
  });
  assert.equal(unplanned.turns[0].valid, false);
});

Deno.test("the example's params are checked with the fix in the message", async () => {
  const config = await loadConfig({
    file: EXAMPLE_CONFIG,
    overrides: { workflow: { params: { rounds: 9, depth: 1 } } },
  });
  await assert.rejects(
    () => buildWorkflow(config),
    (e: Error) =>
      e instanceof WorkflowConfigError && /params has depth; it takes only rounds/.test(e.message),
  );
});

Deno.test("a config file's relative module path is taken from the file's folder", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { module, config } = await copyExample(dir);
    assert.deepEqual((await loadConfig({ file: config })).workflow, {
      kind: "custom",
      module,
      params: { rounds: 1 },
    });
    // An absolute path is kept as written.
    const raw = JSON.parse(await Deno.readTextFile(config));
    raw.workflow.module = EXAMPLE;
    const absolute = join(dir, "absolute.json");
    await Deno.writeTextFile(absolute, JSON.stringify(raw));
    const loaded = await loadConfig({ file: absolute });
    assert.equal((loaded.workflow as { module: string }).module, EXAMPLE);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a run recorded without a module hash is named as possibly changed", () => {
  assert.equal(
    changedModuleText({ path: "/x/flow.ts", recorded: null, current: "ab" }),
    "workflow module /x/flow.ts may have changed: the run recorded no hash of it (now ab)",
  );
});

Deno.test("replay names a module edited after the run as the cause", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { module, config } = await copyExample(dir);
    const store = join(dir, "events.sqlite");
    // The CLI runs in the repository root: ./flow.ts is found beside the config, not there.
    const trained = await train(config, store, "edited", "--steps", "1");
    assert.equal(trained.code, 0, trained.stderr);
    const recorded = sha256Hex(await Deno.readFile(module));
    const source = await Deno.readTextFile(module);
    const target = "renderPrompt(executor.prompt, {";
    assert.ok(source.includes(target));
    await Deno.writeTextFile(module, source.replace(target, `"Edited. " + ${target}`));
    const current = sha256Hex(await Deno.readFile(module));

    // A child: this process imported the module as the run had it.
    const replayed = await runChild(
      "engine/cli/replay.ts",
      "edited",
      "--store",
      store,
      "--format",
      "json",
    );
    assert.equal(replayed.code, 1, replayed.stderr);
    const report = JSON.parse(replayed.stdout);
    assert.equal(report.identicalRun, false);
    assert.deepEqual(report.changedModule, { path: module, recorded, current });
    assert.equal(
      report.likelyCauses[0],
      `workflow module ${module} changed since the run: recorded sha256 ${recorded}, now ${current}`,
    );
    assert.equal(report.alteration, null);
    // The table names it twice: above the verdict, and first among the likely causes.
    const lines = formatReplayReport(report);
    const named = `workflow module ${module} changed since the run`;
    assert.ok(lines[0].startsWith(named), lines.join("\n"));
    assert.equal(lines[lines.indexOf("likely cause:") + 1], `  - ${report.likelyCauses[0]}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("agents that do not fit the module's roles, or a module that does not load, record no run", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { config } = await copyExample(dir);
    const store = join(dir, "events.sqlite");
    const raw = JSON.parse(await Deno.readTextFile(config));
    raw.agents[2].role = "planner";
    const twoPlanners = join(dir, "two-planners.json");
    await Deno.writeTextFile(twoPlanners, JSON.stringify(raw));
    const roles = await train(twoPlanners, store, "roles");
    assert.equal(roles.code, 2, roles.stderr);
    assert.match(
      roles.stderr,
      /agents = .* exactly 1 agent\(s\) with role planner for this planner-executors workflow \(found 2\)/,
    );
    assert.match(roles.stderr, /exactly 2 agent\(s\) with role executor .*\(found 1\)/);
    assert.equal(await exists(store), false, "the store is never opened");
    // The workflow is checked before the store is opened: no store, no run id.
    assert.doesNotMatch(roles.stderr, /run id:/);

    raw.agents[2].role = "executor";
    raw.workflow.module = "./missing.ts";
    const missing = join(dir, "missing.json");
    await Deno.writeTextFile(missing, JSON.stringify(raw));
    const gone = await train(missing, store, "gone");
    assert.equal(gone.code, 2, gone.stderr);
    assert.match(
      gone.stderr,
      new RegExp(`workflow.module ${join(dir, "missing.ts")} cannot be loaded`),
    );
    assert.equal(await exists(store), false, "the store is never opened");
    assert.doesNotMatch(gone.stderr, /run id:/);

    // A module written for the old API (roles as a list) is told how to declare them.
    await Deno.writeTextFile(
      join(dir, "old.ts"),
      `export default () => ({ kind: "old", roles: ["planner", "executor"], run() {} });\n`,
    );
    raw.workflow.module = "./old.ts";
    const old = join(dir, "old.json");
    await Deno.writeTextFile(old, JSON.stringify(raw));
    const listed = await train(old, store, "old");
    assert.equal(listed.code, 2, listed.stderr);
    assert.match(
      listed.stderr,
      /the workflow's roles are \["planner","executor"\]; declare roles as \{ role: number of agents \}/,
    );
    assert.equal(await exists(store), false, "the store is never opened");
    assert.doesNotMatch(listed.stderr, /run id:/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
