/**
 * `deno task eval` end to end on a randomly initialised embedded-architecture model and a small
 * generated benchmark: the printed run ids and table, the events of every seed's run, and the
 * analysis tables projected from them; then bad usage (exit 2, naming what is wrong).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openAnalysis } from "../../analysis/mod.ts";
import { generateArithmeticTasks, gradeAnswer } from "../../engine/tasks/mod.ts";
import { type NewEvent, openStore, type StoredEvent } from "../../events/mod.ts";
import { runCli } from "../support/run-cli.ts";
import { randomModel } from "../replay/tiny-run.ts";

/** `deno task eval ARGS`, in this process through runCli. */
function evalCli(...args: string[]) {
  return runCli("engine/cli/eval.ts", ...args);
}

/** `count` generated arithmetic problems as a benchmark JSONL file. */
async function benchmarkFile(path: string, count: number): Promise<string> {
  const tasks = generateArithmeticTasks({ seed: 3, difficulty: 1, split: "test", count });
  await Deno.writeTextFile(
    path,
    tasks.map((t) => JSON.stringify({ id: t.id, problem: t.problem, answer: t.answer })).join(
      "\n",
    ) + "\n",
  );
  return path;
}

async function readRun(storePath: string, run: string) {
  await using store = await openStore(storePath);
  const events: StoredEvent<NewEvent>[] = [];
  for await (const e of store.readStream(run)) events.push(e as StoredEvent<NewEvent>);
  return { events, verify: await store.verify() };
}

Deno.test("eval: two seeds of a single agent, recorded as eval runs and projected", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const model = await randomModel(tmp);
    const data = await benchmarkFile(join(tmp, "tiny.jsonl"), 3);
    const small = await benchmarkFile(join(tmp, "small.jsonl"), 2);
    const storePath = join(tmp, "events.sqlite");
    const r = await evalCli(
      "--model",
      model,
      "--data",
      data,
      small, // more files may follow --data
      "--n",
      "2",
      "--seeds",
      "2",
      "--max-tokens",
      "8",
      "--device",
      "cpu",
      "--run-id",
      "ev",
      "--store",
      storePath,
    );
    assert.equal(r.code, 0, r.stderr);
    const ids = [...r.stdout.matchAll(/^run id: (\S+)$/gm)].map((m) => m[1]);
    assert.deepEqual(ids, ["ev-seed0", "ev-seed1"]);
    assert.match(r.stdout, /^benchmark\s+problems\s+seeds\s+avg@2\s+pass@2$/m);
    const row = r.stdout.match(/^tiny\s+3\s+2\s+(\S+) ± (\S+)\s+(\S+) ± (\S+)$/m);
    assert.ok(row, r.stdout);
    assert.match(r.stdout, /^small\s+2\s+2\s+/m);

    const perSeedAvg: number[] = [];
    for (const [seed, id] of ids.entries()) {
      const { events, verify } = await readRun(storePath, id);
      assert.equal(verify.ok, true);
      const types = events.map((e) => e.type as string);
      assert.equal(types[0], "run.started");
      assert.equal(types[1], "policy.initialized");
      assert.equal(types[types.length - 1], "run.completed");
      const started = events[0] as StoredEvent<Extract<NewEvent, { type: "run.started" }>>;
      assert.equal(started.data.seed, seed);
      const config = started.data.config as {
        eval: { protocol: string; runs: string[] };
        evaluation: { benchmarks: string[] };
        agents: { model: string }[];
      };
      assert.equal(config.eval.protocol, "single");
      assert.deepEqual(config.eval.runs, ids);
      assert.deepEqual(config.evaluation.benchmarks, [data, small]);
      assert.equal(config.agents[0].model, model);

      const trajectories = events.filter((e) => e.type === "trajectory.completed");
      assert.equal(trajectories.length, (3 + 2) * 2);
      for (const e of events) {
        if (e.type === "turn.generated" || e.type === "trajectory.completed") {
          assert.equal(e.data.phase, "eval");
        }
      }
      // The grade each trajectory carries is the grader's verdict on its final answer.
      const gold = new Map(
        (await Deno.readTextFile(data)).trim().split("\n").map((l) => {
          const o = JSON.parse(l);
          return [o.id, o.answer];
        }),
      );
      for (const e of trajectories) {
        if (e.type !== "trajectory.completed") continue;
        const expected = e.data.finalAnswer !== null &&
          gradeAnswer(gold.get(e.data.problemId)!, `\\boxed{${e.data.finalAnswer}}`).equivalent;
        assert.equal(e.data.correct, expected);
      }
      assert.deepEqual(
        events.filter((e) => e.type === "evaluation.completed").map((e) =>
          e.type === "evaluation.completed" ? e.data.benchmark : ""
        ),
        ["tiny", "small"],
      );
      // Prompt indices run on across benchmarks: tiny's problems are prompts 0-2, small's 3-4.
      const evaluation = events.find((e) => e.type === "evaluation.completed");
      assert.ok(evaluation && evaluation.type === "evaluation.completed");
      assert.equal(evaluation.data.benchmark, "tiny");
      assert.equal(evaluation.data.samplesPerProblem, 2);
      assert.equal(evaluation.data.problems.length, 3);
      assert.deepEqual(
        [...new Set(trajectories.map((t) => t.type === "trajectory.completed" && t.data.prompt))],
        [0, 1, 2, 3, 4],
      );
      let avg = 0;
      let pass = 0;
      evaluation.data.problems.forEach((p, prompt) => {
        const mine = trajectories.filter((t) =>
          t.type === "trajectory.completed" && t.data.prompt === prompt
        );
        assert.ok(
          mine.every((t) => t.type === "trajectory.completed" && t.data.problemId === p.problemId),
        );
        const c = mine.filter((t) => t.type === "trajectory.completed" && t.data.correct).length;
        assert.deepEqual(p, { problemId: p.problemId, n: 2, c });
        avg += c / 2 / 3;
        pass += Number(c > 0) / 3;
      });
      assert.equal(evaluation.data.metrics["avg@2"], avg);
      assert.equal(evaluation.data.metrics["pass@2"], pass);
      perSeedAvg.push(avg);
    }
    const mean = (perSeedAvg[0] + perSeedAvg[1]) / 2;
    assert.equal(row[1], mean.toFixed(4));
    // SEM of two values: |a - b| / 2.
    assert.equal(row[2], (Math.abs(perSeedAvg[0] - perSeedAvg[1]) / 2).toFixed(4));

    // The analysis tables see two evaluated runs beside any other, seeded 0 and 1.
    await using a = await openAnalysis(storePath, { path: join(tmp, "analysis.duckdb") });
    const runs = await a.db.selectFrom("runs").select(["run_id", "seed", "status", "models"])
      .orderBy("run_id").execute();
    assert.deepEqual(
      runs.map((x) => [x.run_id, Number(x.seed), x.status, x.models]),
      [["ev-seed0", 0, "completed", model], ["ev-seed1", 1, "completed", model]],
    );
    const summary = await a.db.selectFrom("eval_summary")
      .select(["run_id", "benchmark", "k", "problems", "avg_at_k"]).where("benchmark", "=", "tiny")
      .orderBy("run_id").execute();
    assert.deepEqual(
      summary.map((s) => [s.run_id, s.benchmark, Number(s.k), Number(s.problems)]),
      [["ev-seed0", "tiny", 2, 3], ["ev-seed1", "tiny", 2, 3]],
    );
    summary.forEach((s, i) => assert.ok(Math.abs(Number(s.avg_at_k) - perSeedAvg[i]) < 1e-12));
    const evalTrajectories = await a.db.selectFrom("trajectories").select("run_id")
      .where("phase", "=", "eval").execute();
    assert.equal(evalTrajectories.length, 2 * (3 + 2) * 2);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("eval: --format json prints only JSON on stdout, the run ids on stderr", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const r = await evalCli(
      "--model",
      await randomModel(tmp),
      "--data",
      await benchmarkFile(join(tmp, "tiny.jsonl"), 1),
      "--n",
      "1",
      "--max-tokens",
      "4",
      "--device",
      "cpu",
      "--run-id",
      "evj",
      "--store",
      join(tmp, "events.sqlite"),
      "--format",
      "json",
    );
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as { benchmarks: { benchmark: string }[] };
    assert.deepEqual(result.benchmarks.map((b) => b.benchmark), ["tiny"]);
    assert.match(r.stderr, /^run id: evj$/m);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("eval: bad usage exits 2 and names what is wrong", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const data = await benchmarkFile(join(tmp, "tiny.jsonl"), 1);
    const store = join(tmp, "events.sqlite");
    await Deno.mkdir(join(tmp, "again"));
    const again = await benchmarkFile(join(tmp, "again", "tiny.jsonl"), 1);
    const cases: [string[], RegExp][] = [
      [["--data", data], /name a training run \(deno task eval RUN\|latest\) or a model \(--model/],
      [["--model", "embedded"], /--data needs at least one benchmark file/],
      [["--model", "embedded", "--data", data, "--workflow", "vote"], /--workflow must be one of/],
      [
        ["--model", "embedded", "--data", data, "--n", "0"],
        /--n must be an integer in 1\.\.1024; got 0/,
      ],
      [["--model", "embedded", "--data", data, "--seeds", "two"], /--seeds must be an integer/],
      [["--model", "embedded", "--data", data, "--bogus"], /bogus/],
      [
        ["--model", join(tmp, "no-such-model"), "--data", data, "--store", store],
        /--model .*no-such-model: no such model directory, and the store .* has no run/,
      ],
      [
        ["--model", "embedded", "--data", join(tmp, "missing.jsonl"), "--store", store],
        /--data .*missing\.jsonl: .*cannot open/,
      ],
      [
        ["--model", "embedded", "--data", data, "--data", again, "--store", store],
        /--data .*again\/tiny\.jsonl: has the benchmark name tiny of an earlier file/,
      ],
      [
        ["--model", "embedded", "--data", data, "--top-p", "2", "--store", store],
        /sampling\.top_p = 2 is not allowed/,
      ],
      [
        ["--model", "embedded", "--data", data, "--worker-group", "solver", "--store", store],
        /--worker-group solver: only picks among a run's checkpoints/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = await evalCli(...args);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, message, args.join(" "));
      assert.match(r.stderr, /usage: deno task eval/);
    }
    const help = await evalCli("--help");
    assert.equal(help.code, 0);
    assert.match(
      help.stdout,
      /^usage: deno task eval RUN\|latest\[@STEP\] .* \| deno task eval --model DIR\|embedded\|RUN\[@STEP\]/m,
    );
    // Refused before anything was recorded: no run was started.
    await using opened = await openStore(store);
    assert.deepEqual(await opened.streams(), []);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
