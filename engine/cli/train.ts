/**
 * `deno task train`: runs an experiment (by default the Dr. MAS refine recipe on the embedded
 * model) and records every step in the event store. Prints `run id: <id>` first (on stderr
 * under `--format json|csv`, so that stdout is only the result). Every agent's model is checked
 * before the run is recorded. With
 * `--resume RUN` (or `latest`: the latest training run) it continues a killed run from its last
 * checkpoint instead. A run id keeps RUN_ID_RULE (events/run-id.ts); a bad one is refused (exit 2)
 * before the store is touched.
 */
import {
  defineCommand,
  formatOption,
  parseFormat,
  runCommand,
  storeOption,
  UsageError,
} from "../../events/cli/command.ts";
import {
  checkRunId,
  DEFAULT_STORE,
  openStore,
  RUN_ID_RULE,
  RunIdError,
  runIdSlug,
} from "../../events/mod.ts";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { ESTIMATOR_NAMES, ESTIMATOR_REGISTRY } from "../advantages/mod.ts";
import {
  ConfigError,
  loadConfig,
  MAX_STEPS,
  overridesFromFlags,
  presetNames,
} from "../config/mod.ts";
import { progressReporter } from "../trainer/progress.ts";
import { runTraining, type TrainProgress, type TrainResult } from "../trainer/train-loop.ts";
import { resumeTraining } from "../trainer/resume-run.ts";
import { latestRunId, readRunLog } from "../trainer/run-log.ts";
import { checkModelFiles } from "../trainer/model-files.ts";
import { printRunId } from "./run-id-line.ts";

const cli = defineCommand({
  name: "train",
  usage: "deno task train [--config FILE | --preset NAME] [--seed N] [--steps N] " +
    "[--device auto|cpu|wasm|webgpu] [--store PATH|postgres://URL] [--format table|json|csv] | " +
    "deno task train --resume RUN|latest [--store PATH|postgres://URL]",
  summary: "Runs a multi-agent RL experiment and records every step as events in the store.\n\n" +
    "estimators (the config's estimator.kind):\n" +
    ESTIMATOR_NAMES.map((name) =>
      `  ${name.padEnd(12)} ${ESTIMATOR_REGISTRY[name].summary} [${ESTIMATOR_REGISTRY[name].scope}]`
    ).join("\n"),
  options: {
    config: { type: "string", help: "experiment config file (JSON)" },
    preset: { type: "string", help: `a named preset: ${presetNames().join(", ")}` },
    seed: { type: "string", help: "override the config's seed" },
    steps: { type: "string", help: `override the config's number of steps (<= ${MAX_STEPS})` },
    device: { type: "string", help: "override the runtime device: auto, cpu, wasm, webgpu" },
    "run-id": {
      type: "string",
      help: `id of the new run: ${RUN_ID_RULE} (default: derived from name and time)`,
    },
    resume: {
      type: "string",
      help: "continue the killed run RUN (or latest: the latest training run) from its last " +
        "checkpoint, with its recorded config",
    },
    store: { ...storeOption.store, default: undefined },
    ...formatOption,
  },
  allowPositionals: false,
});

await runCommand(cli.usage, async () => {
  const { values } = cli.parse(Deno.args);
  const format = parseFormat(values.format);
  const givenRunId = values["run-id"] === undefined ? undefined : runIdFlag(values["run-id"]);
  const progress = progressReporter("train");
  const onProgress = (p: TrainProgress) =>
    progress.update(p.stage === "done" ? p.step + 1 : p.step, p.steps, p.stage, p.metrics);
  // The first Ctrl-C lets the current step finish and be logged; a second one exits at once.
  const interrupt = new AbortController();
  Deno.addSignalListener("SIGINT", () => {
    if (interrupt.signal.aborted) Deno.exit(130);
    progress.finish();
    console.error("stopping after the current step (Ctrl-C again to quit now)");
    interrupt.abort();
  });
  if (values.resume !== undefined) {
    const fixed = ["config", "preset", "seed", "steps", "device", "run-id"] as const;
    const clash = fixed.filter((k) => values[k] !== undefined);
    if (clash.length > 0) {
      throw new UsageError(
        `--resume continues a run with its recorded config; drop --${clash.join(", --")}`,
      );
    }
    await using store = await openStore(values.store ?? DEFAULT_STORE, { create: false });
    const runId = values.resume === "latest" ? await latestRunId(store) : values.resume;
    const { config } = await readRunLog(store, runId);
    const runtime = await openRuntime(config.runtime.device, { threads: config.runtime.threads });
    printRunId(runId, format);
    try {
      const result = await resumeTraining(store, runId, {
        runtime,
        onProgress,
        signal: interrupt.signal,
      });
      progress.finish();
      console.error(
        result.checkpointStep === null
          ? `resumed from the initial weights (no checkpoint logged)`
          : `resumed from the checkpoint of step ${result.checkpointStep}`,
      );
      printResult(result, format);
    } finally {
      progress.finish();
      await runtime.close();
    }
    return;
  }
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
  const runId = givenRunId ?? defaultRunId(config.name);
  // Before the store is opened: a mistyped model path records no run and prints no run id.
  await checkModelFiles(config.agents);
  await using store = await openStore(config.store);
  const runtime = await openRuntime(config.runtime.device, { threads: config.runtime.threads });
  printRunId(runId, format);
  console.error(
    `store ${config.store}; backend ${runtime.info.backend}` +
      (runtime.info.autoReason ? ` (${runtime.info.autoReason})` : ""),
  );
  try {
    const result = await runTraining(config, {
      store,
      runtime,
      runId,
      onProgress,
      signal: interrupt.signal,
    });
    progress.finish();
    printResult(result, format);
  } finally {
    progress.finish();
    await runtime.close();
  }
});

/** `--run-id`'s value if it is a valid run id; a UsageError (exit 2) saying the rule if not. */
function runIdFlag(text: string): string {
  try {
    return checkRunId(text, "--run-id");
  } catch (err) {
    if (err instanceof RunIdError) throw new UsageError(err.message);
    throw err;
  }
}

/** `<name>-<UTC time>-<6 hex>`, the config name made safe (a name may hold any text). */
function defaultRunId(name: string): string {
  const time = new Date().toISOString().replace(/[-:.]/g, "").slice(0, 15);
  return checkRunId(`${runIdSlug(name).slice(0, 96)}-${time}-${crypto.randomUUID().slice(0, 6)}`);
}

function printResult(result: TrainResult, format: string): void {
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
}
