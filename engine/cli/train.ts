/**
 * `deno task train`: runs an experiment (by default the Dr. MAS refine recipe on the embedded
 * model) and records every step in the event store. Prints `run id: <id>` first.
 */
import {
  defineCommand,
  formatOption,
  parseFormat,
  runCommand,
  storeOption,
  UsageError,
} from "../../events/cli/command.ts";
import { openStore } from "../../events/mod.ts";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { ConfigError, loadConfig, overridesFromFlags, presetNames } from "../config/mod.ts";
import { progressReporter } from "../trainer/progress.ts";
import { runTraining } from "../trainer/train-loop.ts";

const cli = defineCommand({
  name: "train",
  usage: "deno task train [--config FILE | --preset NAME] [--seed N] [--steps N] " +
    "[--device auto|cpu|wasm|webgpu] [--store PATH|postgres://URL] [--format table|json|csv]",
  summary: "Runs a multi-agent RL experiment and records every step as events in the store.",
  options: {
    config: { type: "string", help: "experiment config file (JSON)" },
    preset: { type: "string", help: `a named preset: ${presetNames().join(", ")}` },
    seed: { type: "string", help: "override the config's seed" },
    steps: { type: "string", help: "override the config's number of steps" },
    device: { type: "string", help: "override the runtime device: auto, cpu, wasm, webgpu" },
    "run-id": { type: "string", help: "id of the new run (default: derived from name and time)" },
    store: { ...storeOption.store, default: undefined },
    ...formatOption,
  },
  allowPositionals: false,
});

await runCommand(cli.help().split("\n")[0], async () => {
  const { values } = cli.parse(Deno.args);
  const format = parseFormat(values.format);
  let config;
  try {
    config = await loadConfig({
      file: values.config,
      preset: values.preset,
      overrides: overridesFromFlags({
        seed: values.seed,
        steps: values.steps,
        device: values.device,
        store: values.store,
      }),
    });
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
  const runId = values["run-id"] ??
    `${config.name}-${new Date().toISOString().replace(/[-:.]/g, "").slice(0, 15)}-${
      crypto.randomUUID().slice(0, 6)
    }`;
  await using store = await openStore(config.store);
  const runtime = await openRuntime(config.runtime.device, { threads: config.runtime.threads });
  console.log(`run id: ${runId}`);
  console.error(
    `store ${config.store}; backend ${runtime.info.backend}` +
      (runtime.info.autoReason ? ` (${runtime.info.autoReason})` : ""),
  );
  const progress = progressReporter("train");
  try {
    const result = await runTraining(config, {
      store,
      runtime,
      runId,
      onProgress: (p) =>
        progress.update(p.stage === "done" ? p.step + 1 : p.step, p.steps, p.stage, p.metrics),
    });
    progress.finish();
    const rows = Object.entries(result.metrics).map(([metric, value]) => ({ metric, value }));
    if (format === "json") console.log(JSON.stringify(result, null, 2));
    else if (format === "csv") {
      console.log("metric,value");
      for (const r of rows) console.log(`${r.metric},${r.value}`);
    } else {
      for (const r of rows) console.log(`${r.metric.padEnd(28)} ${r.value.toFixed(4)}`);
      for (const [wg, hash] of Object.entries(result.parameterHashes)) {
        console.log(`final parameters ${wg.padEnd(12)} ${hash}`);
      }
    }
  } finally {
    progress.finish();
    await runtime.close();
  }
});
