/**
 * A run of 0 steps evaluates its initial team once: a study's start accuracy, measured with the
 * cell's own config (benchmarks, n_samples, sampling, workflow). Through the real CLI, as a study
 * runs it: one `evaluation.completed` per benchmark at step 0 and no training; the runs view
 * counts 0 steps, the evals views show it, replay reproduces it, and an interrupt before the
 * evaluation is resumed to the same evaluation (replay refuses the stopped run:
 * tests/replay/replay-refusals_test.ts).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { formatReplayReport } from "../../engine/replay/mod.ts";
import { readRunLog } from "../../engine/trainer/run-log/mod.ts";
import { runTraining, TrainingInterrupted } from "../../engine/trainer/train-loop.ts";
import { type NewEvent, openStore, type StoredEvent } from "../../events/mod.ts";
import { runCli } from "../support/run-cli.ts";

const TRAIN = "engine/cli/train.ts";

/** The run's events, in log order. */
async function runEvents(store: string, runId: string): Promise<StoredEvent<NewEvent>[]> {
  await using s = await openStore(store, { readOnly: true });
  return (await Array.fromAsync(s.readStream(runId))) as StoredEvent<NewEvent>[];
}

/** The `evaluation.completed` events' data, in log order. */
const evaluations = (events: readonly StoredEvent<NewEvent>[]) =>
  events.flatMap((e) => e.type === "evaluation.completed" ? [e.data] : []);

/** `deno task sql QUERY --format json`'s rows, after checking it exited 0. */
async function sql(store: string, query: string): Promise<Record<string, unknown>[]> {
  const r = await runCli("analysis/cli/sql.ts", query, "--store", store, "--format", "json");
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

Deno.test({
  name: "a run of 0 steps evaluates its initial team once, at step 0, and replays identically",
  sanitizeResources: false,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "polyrl-zero-steps-" });
    const store = join(dir, "events.sqlite");
    // Two benchmarks of 4 problems each, 3 samples a problem: not the preset's 1 and 2.
    const trained = await runCli(
      TRAIN,
      ...["--preset", "smoke", "--steps", "0", "--device", "cpu", "--run-id", "start"],
      ...["--set", 'evaluation.benchmarks=["validation","test"]'],
      ...["--set", "evaluation.n_samples=3", "--store", store],
    );
    assert.equal(trained.code, 0, trained.stderr);

    await t.step("the log: one evaluation per benchmark at step 0, no training", async () => {
      const events = await runEvents(store, "start");
      const evaluated = evaluations(events);
      assert.deepEqual(
        evaluated.map((d) => [d.step, d.benchmark, d.samplesPerProblem, d.problems.length]),
        [[0, "validation", 3, 4], [0, "test", 3, 4]],
      );
      assert.ok(evaluated.every((d) => d.problems.every((p) => p.n === 3)));
      const trajectories = events.filter((e) => e.type === "trajectory.completed");
      assert.equal(trajectories.length, 2 * 4 * 3);
      assert.ok(trajectories.every((e) => e.data.phase === "eval" && e.data.step === 0));
      const types = new Set<string>(events.map((e) => e.type));
      for (const training of ["step.started", "gradient_step.applied", "checkpoint.saved"]) {
        assert.ok(!types.has(training), `a 0-step run logged ${training}`);
      }
      const completed = events.at(-1)!;
      assert.equal(completed.type, "run.completed");
      const metrics = Object.fromEntries(
        evaluated.flatMap((d) =>
          Object.entries(d.metrics).map(([k, v]) => [`${d.benchmark}/${k}`, v])
        ),
      );
      assert.deepEqual(completed.data, { steps: 0, metrics });
      // The progress line: nothing counted as a step, no NaN, nothing left at the end.
      assert.match(
        trained.stderr,
        /^train 0\/0 \[initial team evaluated\] 0\.000 steps\/s elapsed \d+s ETA 0s validation\/avg@3=/m,
      );
      assert.doesNotMatch(trained.stderr, /NaN|undefined/);
    });

    await t.step("the runs, evals and eval_summary views", async () => {
      assert.deepEqual(
        await sql(store, "SELECT status, steps, steps_done, last_step FROM runs"),
        [{ status: "completed", steps: 0, steps_done: 0, last_step: null }],
      );
      assert.deepEqual(
        await sql(
          store,
          "SELECT step, benchmark, count(*) AS problems, sum(n) AS samples FROM evals " +
            "GROUP BY ALL ORDER BY benchmark",
        ),
        [
          { step: 0, benchmark: "test", problems: 4, samples: 12 },
          { step: 0, benchmark: "validation", problems: 4, samples: 12 },
        ],
      );
      const summary = await sql(
        store,
        "SELECT step, benchmark, k, problems, avg_at_k FROM eval_summary ORDER BY benchmark",
      );
      const recorded = evaluations(await runEvents(store, "start"));
      assert.deepEqual(
        summary,
        ["test", "validation"].map((benchmark) => ({
          step: 0,
          benchmark,
          k: 3,
          problems: 4,
          avg_at_k: recorded.find((d) => d.benchmark === benchmark)!.metrics["avg@3"],
        })),
      );
    });

    await t.step("replay re-executes the evaluation, every event identical", async () => {
      const r = await runCli("engine/cli/replay.ts", "start", "--store", store, "--format", "json");
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const report = JSON.parse(r.stdout);
      const logged = (await runEvents(store, "start")).length;
      // Everything but run.started (replay reports its differences up front) is compared.
      assert.deepEqual(
        [report.ok, report.identicalRun, report.steps, report.from, report.to, report.divergent],
        [true, true, 0, 0, 0, 0],
      );
      assert.deepEqual([report.compared, report.identical], [logged - 1, logged - 1]);
      assert.match(
        formatReplayReport(report).join("\n"),
        /replay of start on cpu, its evaluation of the initial team \(a run of 0 steps; step 0 in the log\): \d+ events compared, \d+ identical/,
      );
      const range = await runCli("engine/cli/replay.ts", "start", "--from", "1", "--store", store);
      assert.equal(range.code, 2, range.stdout + range.stderr);
      assert.match(range.stderr, /run start has 0 steps; .* need from = to = 0/);
    });

    await t.step("an interrupt stops before the evaluation; a resume evaluates", async () => {
      const runtime = await openRuntime("cpu", { threads: 1 });
      try {
        await using s = await openStore(store);
        const { config } = await readRunLog(s, "start");
        const interrupt = new AbortController();
        interrupt.abort();
        await assert.rejects(
          () =>
            runTraining(config, {
              store: s,
              runtime,
              runId: "stopped",
              signal: interrupt.signal,
            }),
          (e) =>
            e instanceof TrainingInterrupted &&
            e.message ===
              "stopped before evaluating its initial team (a run of 0 steps); a resume evaluates it",
        );
      } finally {
        await runtime.close();
      }
      const stopped = await runEvents(store, "stopped");
      assert.deepEqual(evaluations(stopped), []);
      assert.equal(stopped.at(-1)!.type, "run.failed");
      const resumed = await runCli(TRAIN, "--resume", "stopped", "--store", store);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.deepEqual(
        evaluations(await runEvents(store, "stopped")),
        evaluations(await runEvents(store, "start")),
      );
    });
    await Deno.remove(dir, { recursive: true });
  },
});
