/**
 * Runs replay cannot re-execute are refused clearly (exit 1): an evaluation run of `deno task
 * eval`, and a 0-step run stopped before its evaluation of the initial team (a completed one
 * replays: tests/trainer/zero-step-run_test.ts); and `latest` of replay and `train --resume` is
 * the latest training run, never an evaluation recorded after it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { resolveModelSource, runEvaluation } from "../../engine/evaluation/mod.ts";
import { NothingToReplayError, replayRun } from "../../engine/replay/mod.ts";
import { latestRunId, readRunLog, RunLogError } from "../../engine/trainer/run-log/run-log.ts";
import { runTraining, TrainingInterrupted } from "../../engine/trainer/train-loop.ts";
import { openStore } from "../../events/mod.ts";
import { randomModel, tinyConfig } from "./tiny-run.ts";
import { runCli } from "../support/run-cli.ts";

/** The CLI run, with stdout and stderr together as `out`. */
async function cli(script: string, ...args: string[]) {
  const r = await runCli(script, ...args);
  return { ...r, out: r.stdout + r.stderr };
}

Deno.test("replay refuses eval and 0-step runs; latest is the latest training run", async (t) => {
  const tmp = await Deno.makeTempDir();
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    const model = await randomModel(tmp);
    const path = join(tmp, "events.sqlite");
    const data = join(tmp, "bench.jsonl");
    await Deno.writeTextFile(data, JSON.stringify({ id: "p1", problem: "2 + 3", answer: "5" }));
    {
      await using store = await openStore(path);
      const interrupt = new AbortController();
      interrupt.abort();
      await assert.rejects(
        () =>
          runTraining(tinyConfig(model, path, 0), {
            store,
            runtime,
            runId: "zero",
            signal: interrupt.signal,
          }),
        TrainingInterrupted,
      );
      await runTraining(tinyConfig(model, path, 1), { store, runtime, runId: "trained" });
      await runEvaluation({
        store,
        runtime,
        source: await resolveModelSource(store, model),
        protocol: "single",
        benchmarks: [data],
        n: 1,
        seeds: [0],
        runIds: ["ev"],
        sampling: { max_tokens: 4 },
        device: "cpu",
        threads: 1,
      });
    }
    const replay = (...args: string[]) =>
      cli("engine/cli/replay.ts", ...args, "--store", path, "--format", "json");

    await t.step("an evaluation run is refused, for replay and for resume", async () => {
      await using store = await openStore(path);
      const refused = /run ev is an evaluation run \(deno task eval\); replay and train --resume/;
      await assert.rejects(() => replayRun(store, "ev", { runtime }), refused);
      await assert.rejects(() => readRunLog(store, "ev"), RunLogError);
      const r = await replay("ev");
      assert.equal(r.code, 1, r.out);
      assert.match(r.out, /error: run ev is an evaluation run \(deno task eval\)/);
      assert.doesNotMatch(r.out, /NaN|undefined/);
    });

    await t.step("a 0-step run stopped before its evaluation has nothing to replay", async () => {
      await using store = await openStore(path);
      const refused =
        /^run zero has 0 steps and stopped before its evaluation of the initial team ended \(deno task train --resume zero runs it\): nothing to replay$/;
      await assert.rejects(
        () => replayRun(store, "zero", { runtime }),
        (e) => e instanceof NothingToReplayError && refused.test(e.message),
      );
      const r = await replay("zero");
      assert.equal(r.code, 1, r.out);
      assert.match(r.out, /error: run zero has 0 steps and stopped before its evaluation/);
      assert.doesNotMatch(r.out, /NaN|undefined|-1/);
    });

    await t.step("latest skips the evaluation recorded after the training run", async () => {
      {
        await using store = await openStore(path);
        assert.equal(await latestRunId(store), "trained");
      }
      const r = await replay("latest");
      assert.equal(r.code, 0, r.out);
      const report = JSON.parse(r.stdout);
      assert.equal(report.runId, "trained");
      assert.equal(report.ok, true);
      const resume = await cli("engine/cli/train.ts", "--resume", "latest", "--store", path);
      assert.equal(resume.code, 1, resume.out);
      assert.match(resume.out, /run trained already completed/);
    });

    await t.step("a store of evaluation runs only has no latest training run", async () => {
      const only = join(tmp, "evals.sqlite");
      await using store = await openStore(only);
      await using source = await openStore(path);
      for await (const e of source.readStream("ev")) {
        await store.append("ev", [{ type: e.type, data: e.data } as never]);
      }
      await assert.rejects(
        () => latestRunId(store),
        /holds no training runs \(only 1 evaluation run\(s\) of deno task eval\)/,
      );
    });
  } finally {
    await runtime.close();
    await Deno.remove(tmp, { recursive: true });
  }
});
