/**
 * `runtime.fused_ops` is recorded with the run and rebuilds the same graphs on replay: a run with
 * every FUSED_OPS fused replays identical, and it is not the run the composed graphs make (the
 * fused kernels sum in their own order), so a replay that ignored the key would diverge.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FUSED_OPS } from "../../adapters/model/mod.ts";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { replayRun } from "../../engine/replay/mod.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import { openStore } from "../../events/mod.ts";
import { randomModel, tinyConfig } from "./tiny-run.ts";

/** The data of every event of a one-step run after run.started, fused or not. */
async function oneStep(tmp: string, model: string, fused: boolean) {
  const path = join(tmp, `fused-${fused}.sqlite`);
  const base = tinyConfig(model, path, 1);
  const ops = fused ? FUSED_OPS : [];
  const config = { ...base, runtime: { ...base.runtime, fused_ops: [...ops] } };
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    await using store = await openStore(path);
    await runTraining(config, { store, runtime, runId: "run-f" });
    const report = await replayRun(store, "run-f", { runtime });
    const events = [];
    for await (const e of store.readStream("run-f")) {
      if (e.type !== "run.started") events.push(JSON.stringify(e.data));
    }
    return { report, events };
  } finally {
    await runtime.close();
  }
}

Deno.test("runtime.fused_ops is recorded, replays identical, and makes another run", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const model = await randomModel(tmp);
    const fused = await oneStep(tmp, model, true);
    assert.equal(fused.report.ok, true, JSON.stringify(fused.report.firstDivergence));
    assert.equal(fused.report.identical, fused.report.compared);
    const composed = await oneStep(tmp, model, false);
    assert.equal(composed.report.ok, true);
    assert.equal(fused.events.length, composed.events.length);
    assert.ok(
      fused.events.some((e, i) => e !== composed.events[i]),
      "the fused run's events differ from the composed run's somewhere",
    );
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
