/**
 * `deno task bench replay`: replay wall time over the original run's wall time for a tiny refine
 * run on cpu (target <= 1.1: replay is the same loop minus the writes), and the verification-only
 * throughput of the hash chain (events/s, what `deno task verify` does).
 */
import { join } from "node:path";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { replayRun } from "../../engine/replay/mod.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import { openStore } from "../../events/mod.ts";
import { randomModel, tinyConfig } from "./tiny-run.ts";

/** Prints the suite's report. */
export async function run(): Promise<void> {
  const tmp = await Deno.makeTempDir();
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    const model = await randomModel(tmp);
    const path = join(tmp, "events.sqlite");
    const config = tinyConfig(model, path, 2);
    await using store = await openStore(path);
    let started = performance.now();
    await runTraining(config, { store, runtime, runId: "bench" });
    const original = (performance.now() - started) / 1000;
    started = performance.now();
    const report = await replayRun(store, "bench", { runtime });
    const replay = (performance.now() - started) / 1000;
    started = performance.now();
    const verified = await store.verify({ stream: "bench" });
    const verify = (performance.now() - started) / 1000;
    console.log(`original run     ${original.toFixed(2)} s`);
    console.log(
      `replay           ${replay.toFixed(2)} s (${report.ok ? "identical" : "DIVERGED"})`,
    );
    console.log(`replay/original  ${(replay / original).toFixed(3)} (target <= 1.1)`);
    console.log(
      `verify           ${verified.events} events in ${verify.toFixed(3)} s = ` +
        `${(verified.events / verify).toFixed(0)} events/s`,
    );
  } finally {
    await runtime.close();
    await Deno.remove(tmp, { recursive: true });
  }
}
