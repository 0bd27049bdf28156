/**
 * `deno task eval RUN` end to end: a real training run's team (a LoRA solver and a fully trained
 * verifier) evaluated by the CLI in a subprocess. With the run's seed and own benchmarks it
 * re-samples the run's final evaluation: every agent's turns, token for token and logprob for
 * logprob, which holds only if each worker group plays its own role with its own final weights.
 * Then more seeds, benchmark files, and the refusals.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type NewEvent, openStore, type StoredEvent } from "../../events/mod.ts";
import type { NormalizedConfig } from "../../engine/config/mod.ts";
import { taskSource } from "../../engine/trainer/rollout/task-source.ts";
import { runCli } from "../support/run-cli.ts";
import { trainRun } from "./trained-run.ts";

const EVAL = "engine/cli/eval.ts";

async function events(storePath: string, run: string): Promise<StoredEvent<NewEvent>[]> {
  await using store = await openStore(storePath, { readOnly: true });
  const out: StoredEvent<NewEvent>[] = [];
  for await (const e of store.readStream(run)) out.push(e as StoredEvent<NewEvent>);
  return out;
}

/** Every eval-phase turn: who spoke where, what it said and with which logprobs. */
function evalTurns(list: readonly StoredEvent<NewEvent>[]) {
  return list.flatMap((e) =>
    e.type === "turn.generated" && e.data.phase === "eval"
      ? [[
        e.data.step,
        e.data.prompt,
        e.data.sample,
        e.data.turn,
        e.data.agent,
        e.data.text,
        [...e.data.responseTokens],
        [...e.data.logprobs],
      ]]
      : []
  );
}

function completed(list: readonly StoredEvent<NewEvent>[]) {
  return list.flatMap((e) =>
    e.type === "evaluation.completed" ? [[e.data.benchmark, e.data.step, e.data.problems]] : []
  );
}

Deno.test("eval RUN: the run's own team, each worker group with its final weights in its own role", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-team-eval-" });
  try {
    const storePath = join(tmp, "events.sqlite");
    const hashes = await trainRun(tmp, storePath, "team");
    const trained = await events(storePath, "team");

    const r = await runCli(
      EVAL,
      "latest",
      "--device",
      "cpu",
      "--run-id",
      "again",
      "--store",
      storePath,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^run id: again$/m);
    assert.match(r.stderr, /team team@0: team@0\/solver, team@0\/verifier/);
    assert.match(r.stdout, /^validation\s+4\s+1\s+/m);
    const again = await events(storePath, "again");

    // Each worker group loaded its own final checkpoint.
    const policies = again.filter((e) => e.type === "policy.initialized");
    assert.deepEqual(
      policies.map((e) =>
        e.type === "policy.initialized"
          ? [e.data.workerGroup, e.data.agents, e.data.source, e.data.parameterHash]
          : []
      ),
      [
        ["solver", ["solver"], "run:team@0/solver", hashes.solver],
        ["verifier", ["verifier"], "run:team@0/verifier", hashes.verifier],
      ],
    );
    const started = again[0];
    assert.ok(started.type === "run.started");
    const config = started.data.config as {
      eval: { protocol: string; model: { run: string; step: number; members: unknown[] } };
      workflow: { kind: string };
      agent_to_wg: Record<string, string>;
    };
    assert.equal(config.eval.protocol, "team");
    assert.deepEqual([config.eval.model.run, config.eval.model.step], ["team", 0]);
    assert.equal(config.eval.model.members.length, 2);
    assert.equal(config.workflow.kind, "refine");
    assert.deepEqual(config.agent_to_wg, { solver: "solver", verifier: "verifier" });

    // The run's final evaluation, re-sampled: both agents' turns and the per-problem counts.
    const fromTraining = evalTurns(trained);
    assert.ok(fromTraining.some((t) => t[4] === "verifier"), "the verifier spoke in evaluation");
    assert.deepEqual(evalTurns(again), fromTraining);
    assert.deepEqual(completed(again), completed(trained));
    assert.equal(again.at(-1)!.type, "run.completed");

    // One worker group in every role (eval --model RUN --worker-group solver) is another policy:
    // its verifier turns differ from the team's.
    const single = await runCli(
      EVAL,
      "--model",
      "team",
      "--worker-group",
      "solver",
      "--workflow",
      "refine",
      "--data",
      await validationFile(tmp, trained),
      "--n",
      "2",
      "--seed",
      "0",
      "--device",
      "cpu",
      "--run-id",
      "solver-only",
      "--store",
      storePath,
    );
    assert.equal(single.code, 0, single.stderr);
    const verifierTurns = (list: readonly StoredEvent<NewEvent>[]) =>
      evalTurns(list).filter((t) => t[4] === "verifier").map((t) => t[7]);
    assert.notDeepEqual(
      verifierTurns(await events(storePath, "solver-only")),
      verifierTurns(again),
    );

    // More seeds and a benchmark file: one run per seed from the run's seed, the file's name.
    const bench = join(tmp, "bench.jsonl");
    await Deno.writeTextFile(
      bench,
      [
        { id: "a", problem: "What is 2 + 3?", answer: "5" },
        { id: "b", problem: "What is 4 * 6?", answer: "24" },
      ].map((o) => JSON.stringify(o)).join("\n") + "\n",
    );
    const seeds = await runCli(
      EVAL,
      "team@0",
      "--data",
      bench,
      "--n",
      "1",
      "--seeds",
      "2",
      "--device",
      "cpu",
      "--run-id",
      "seeds",
      "--format",
      "json",
      "--store",
      storePath,
    );
    assert.equal(seeds.code, 0, seeds.stderr);
    const result = JSON.parse(seeds.stdout);
    assert.equal(result.protocol, "team");
    assert.equal(result.model, "team@0");
    assert.deepEqual(result.runIds, ["seeds-seed0", "seeds-seed1"]);
    assert.deepEqual(
      result.benchmarks.map((b: { benchmark: string; problems: number; seeds: number }) => [
        b.benchmark,
        b.problems,
        b.seeds,
      ]),
      [["bench", 2, 2]],
    );

    // Refusals: exit 2 naming the problem.
    const refused = async (expected: RegExp, ...args: string[]) => {
      const out = await runCli(EVAL, ...args, "--device", "cpu", "--store", storePath);
      assert.equal(out.code, 2, `${args.join(" ")}: ${out.stdout}${out.stderr}`);
      assert.match(out.stderr, expected);
    };
    await refused(
      /--workflow is for --model; eval RUN evaluates every worker group/,
      "team",
      "--workflow",
      "debate",
    );
    await refused(/--worker-group is for --model/, "team", "--worker-group", "solver");
    await refused(/has no run nope/, "nope");
    await refused(
      /choose one with --worker-group to put it in every role, or evaluate the whole team in its own roles: deno task eval team/,
      "--model",
      "team",
      "--data",
      bench,
    );
    await refused(
      /--data .*missing\.jsonl: .*cannot open/,
      "team",
      "--data",
      join(tmp, "missing.jsonl"),
    );
    await refused(/run again is an evaluation run/, "again");
    await refused(/no checkpoint at step 3; its checkpoints are at steps 0/, "team@3");
    await refused(/name a training run \(deno task eval RUN\|latest\) or a model/);
    await refused(/sampling\.temperature = -1 is not allowed/, "team", "--temperature=-1");
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

/** The validation split the run evaluated on (drawn from its config), as validation.jsonl. */
async function validationFile(dir: string, trained: readonly StoredEvent<NewEvent>[]) {
  const started = trained[0];
  assert.ok(started.type === "run.started");
  const { validation } = await taskSource(started.data.config as unknown as NormalizedConfig);
  const path = join(dir, "validation.jsonl");
  await Deno.writeTextFile(
    path,
    validation.map((q) => JSON.stringify({ id: q.id, problem: q.problem, answer: q.answer }))
      .join("\n"),
  );
  return path;
}
