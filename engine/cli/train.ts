/**
 * `deno task train`: runs an experiment (by default the Dr. MAS refine recipe on the embedded
 * model) and records every step in the event store. Prints `run id: <id>` first (on stderr
 * under `--format json|csv`, so that stdout is only the result). `--model DIR` sets every agent's
 * model (one base model for the whole team); every agent's model is checked before the run is
 * recorded. `--set KEY=VALUE` changes one key of the config on a dotted path (set-option.ts);
 * `--print-config` prints the resolved config and `--dry-run` checks a run's inputs, neither
 * opening a store. With
 * `--resume RUN` (or `latest`: the latest training run) it continues a killed run from its last
 * checkpoint instead. A run id keeps RUN_ID_RULE (events/run-id.ts); a bad one is refused (exit 2)
 * before the store is touched.
 */
import {
  commandExitCode,
  defineCommand,
  ExitCode,
  formatOption,
  listenForSignal,
  parseFormat,
  storeOption,
  UsageError,
  userPath,
} from "../../events/cli/mod.ts";
import {
  checkRunId,
  DEFAULT_STORE,
  openStore,
  RUN_ID_RULE,
  RunIdError,
  runIdSlug,
} from "../../events/mod.ts";
import { HfError } from "../../adapters/hf/mod.ts";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { ESTIMATOR_NAMES, ESTIMATOR_REGISTRY } from "../advantages/mod.ts";
import {
  ConfigError,
  loadConfig,
  MAX_STEPS,
  type NormalizedConfig,
  overridesFromFlags,
  parseSetOption,
  PRESET_SUMMARIES,
  presetNames,
} from "../config/mod.ts";
import { trainProgress } from "../trainer/train-progress.ts";
import { runTraining, TrainingInterrupted, type TrainResult } from "../trainer/train-loop.ts";
import { buildWorkflow, WorkflowConfigError } from "../workflows/mod.ts";
import { resumeTraining } from "../trainer/resume-run.ts";
import { latestRunId, readRunLog } from "../trainer/run-log/mod.ts";
import { checkModelFiles, ModelFilesError } from "../trainer/model-files.ts";
import { checkModelFit, ModelFitError } from "../trainer/model-fit.ts";
import { type RolloutDispatch, type TaskSource, taskSource } from "../trainer/rollout/mod.ts";
import { BenchmarkFileError } from "../tasks/mod.ts";
import { interruptedMessage } from "./interrupted-message.ts";
import { dryRunSummary } from "./dry-run-summary.ts";
import { printRunId } from "./run-id-line.ts";

const cli = defineCommand({
  name: "train",
  usage: "deno task train [--config FILE | --preset NAME] [--set KEY=VALUE ...] [--seed N] " +
    "[--steps N] " +
    "[--model DIR|embedded] [--device auto|cpu|wasm|webgpu|webgpu-web] [--store PATH|postgres://URL] " +
    "[--format table|json|csv] [--print-config | --dry-run] | " +
    "deno task train --resume RUN|latest [--store PATH|postgres://URL]",
  summary: "Runs a multi-agent RL experiment and records every step as events in the store.\n\n" +
    "estimators (the config's estimator.kind):\n" +
    ESTIMATOR_NAMES.map((name) =>
      `  ${name.padEnd(12)} ${ESTIMATOR_REGISTRY[name].summary} [${ESTIMATOR_REGISTRY[name].scope}]`
    ).join("\n") +
    "\n\npresets (--preset NAME):\n" +
    presetNames().map((name) => `  ${name.padEnd(14)} ${PRESET_SUMMARIES[name]}`).join("\n"),
  options: {
    config: { type: "string", value: "FILE", path: true, help: "experiment config file (JSON)" },
    preset: { type: "string", value: "NAME", help: `a named preset: ${presetNames().join(", ")}` },
    set: {
      type: "string",
      multiple: true,
      value: "KEY=VALUE",
      help: "set one config key on a dotted path, after --config/--preset and before --seed, " +
        "--steps, --device, --store and --model (which win); repeatable, in order. VALUE is " +
        "JSON if it parses (0.01, true, null removes the key, [..], {..}), else text. " +
        "agents.NAME.KEY: the agent with id NAME, else every agent with role NAME",
    },
    seed: { type: "string", value: "N", help: "override the config's seed" },
    steps: {
      type: "string",
      value: "N",
      help: `override the config's number of steps (<= ${MAX_STEPS})`,
    },
    device: {
      type: "string",
      value: "auto|cpu|wasm|webgpu|webgpu-web",
      help: "override the runtime device: auto, cpu, wasm, webgpu, webgpu-web",
    },
    model: {
      type: "string",
      value: "DIR|embedded",
      help: "every agent's model: an HF checkpoint directory (config.json, tokenizer.json, " +
        "safetensors) or embedded; checked before the run is recorded",
    },
    "run-id": {
      type: "string",
      value: "ID",
      help: `id of the new run: ${RUN_ID_RULE} (default: derived from name and time)`,
    },
    resume: {
      type: "string",
      value: "RUN|latest",
      help: "continue the killed run RUN (or latest: the latest training run) from its last " +
        "checkpoint, with its recorded config",
    },
    store: { ...storeOption.store, default: undefined },
    ...formatOption,
    "print-config": {
      type: "boolean",
      help: "print the resolved config as JSON (what run.started would record) and exit; " +
        "opens no store and reads no model",
    },
    "dry-run": {
      type: "boolean",
      help: "check the config, every agent's model and the tasks as a run would, print a " +
        "summary and exit; creates no store and records nothing",
    },
  },
  allowPositionals: false,
  examples: [
    "deno task train --preset smoke --steps 2",
    "deno task train --config study/refine-drmas.json --seed 1 --store runs.sqlite",
    "deno task train --preset smoke --set agents.solver.trainable.rank=16 --set loss.kl_coef=0.01",
    "deno task train --preset refine-drmas --set estimator.kind=grpo --print-config",
    "deno task train --preset debate-mada --set agents.generator.optimizer.lr=5e-5 --dry-run",
    "deno task train --resume latest",
  ],
});

/** `deno task train ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(cli.usage, async () => {
    const { values } = cli.parse(args);
    const format = parseFormat(values.format);
    const givenRunId = values["run-id"] === undefined ? undefined : runIdFlag(values["run-id"]);
    const progress = trainProgress("train");
    const onProgress = progress.onProgress;
    // The first Ctrl-C lets the current step finish and be logged (the last step stops before the
    // final evaluation), and the run is recorded as interrupted; a second one exits at once.
    const interrupt = new AbortController();
    using _ctrlC = listenForSignal("SIGINT", () => {
      if (interrupt.signal.aborted) Deno.exit(ExitCode.interrupted);
      progress.finish();
      console.error(
        "stopping after the current step, or before the final evaluation in the last one " +
          "(Ctrl-C again to quit now)",
      );
      interrupt.abort();
    });
    /** Says where the run stopped and how to continue it, for the exit code of an interrupt. */
    const stopped = (interrupted: TrainingInterrupted, runId: string, store: string) => {
      progress.finish();
      console.error(interruptedMessage(interrupted, runId, store));
      return ExitCode.interrupted;
    };
    if (values.resume !== undefined) {
      const fixed = [
        "config",
        "preset",
        "set",
        "seed",
        "steps",
        "device",
        "model",
        "run-id",
        "print-config",
        "dry-run",
      ] as const;
      const clash = fixed.filter((k) => values[k] !== undefined);
      if (clash.length > 0) {
        throw new UsageError(
          `--resume continues a run with its recorded config; drop --${clash.join(", --")}`,
        );
      }
      const storeTarget = values.store ?? DEFAULT_STORE;
      await using store = await openStore(storeTarget, { create: false });
      const runId = values.resume === "latest" ? await latestRunId(store) : values.resume;
      const { config } = await readRunLog(store, runId);
      const runtime = await openRuntime(config.runtime.device, { threads: config.runtime.threads });
      printRunId(runId, format);
      try {
        const result = await resumeTraining(store, runId, {
          runtime,
          onProgress,
          signal: interrupt.signal,
          dispatch: rolloutWorkers,
        });
        progress.finish();
        console.error(
          result.checkpointStep === null
            ? `resumed at step 0 from the initial weights (no checkpoint logged)`
            : `resumed at step ${result.checkpointStep + 1} from the checkpoint of step ` +
              `${result.checkpointStep}`,
        );
        printResult(result, format);
      } catch (err) {
        if (err instanceof TrainingInterrupted) return stopped(err, runId, storeTarget);
        throw err;
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
        sets: values.set?.map(parseSetOption),
        // A path as typed means the user's directory; "embedded" is a name.
        model: values.model === undefined || values.model === "embedded"
          ? values.model
          : userPath(values.model),
        overrides: overridesFromFlags({
          seed: values.seed,
          steps: values.steps,
          device: values.device,
          store: values.store,
        }),
        onWarning: (line) => console.error(`warning: ${line}`),
      });
    } catch (err) {
      if (err instanceof ConfigError) throw new UsageError(err.message);
      throw err;
    }
    if (values["print-config"]) {
      console.log(JSON.stringify(config, null, 2));
      return;
    }
    const runId = givenRunId ?? defaultRunId(config.name);
    const tasks = await checkRunInputs(config, values.model === undefined ? undefined : "--model");
    if (values["dry-run"]) {
      console.log(dryRunSummary(config, tasks));
      return;
    }
    await using store = await openStore(config.store);
    const runtime = await openRuntime(config.runtime.device, { threads: config.runtime.threads });
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
        // Only a run that is in the store gets its id printed: a config refused while the
        // workflow is built records nothing.
        onRecorded: () => printRunId(runId, format),
        signal: interrupt.signal,
        dispatch: rolloutWorkers,
      }).catch((err) => {
        // The workflow cannot be built (a custom module that does not load) or its declared roles
        // do not fit the agents: a config mistake, found once the workflow is built.
        if (err instanceof ConfigError || err instanceof WorkflowConfigError) {
          throw new UsageError(err.message);
        }
        // A model whose weights turn out damaged as they load (NaN): refused before run.started.
        if (err instanceof HfError) throw new UsageError(err.message);
        throw err;
      });
      progress.finish();
      printResult(result, format);
    } catch (err) {
      if (err instanceof TrainingInterrupted) return stopped(err, runId, config.store);
      throw err;
    } finally {
      progress.finish();
      await runtime.close();
    }
  });

if (import.meta.main) Deno.exit(await main(Deno.args));

/**
 * How a run whose config says `rollout.dispatch` "workers" plays its episodes: rollout workers
 * over its Postgres store (engine/workers), what they report (no worker seems to run) as warnings.
 */
async function rolloutWorkers(...args: Parameters<RolloutDispatch>): ReturnType<RolloutDispatch> {
  // The workers' queue (pg-boss, pg) loads only for a run that dispatches to workers.
  const { workerRollouts } = await import("../workers/mod.ts");
  return await workerRollouts(...args, { warn: (line) => console.error(`warning: ${line}`) });
}

/**
 * What a run reads from the user's files, checked before the store is opened, so that a refused
 * run creates no store, records nothing and prints no run id: every agent's model files, the
 * tasks and benchmark files (read as the run will read them again), that each model fits the run
 * (model-fit.ts), and the workflow built as the run will build it (a custom module that loads, its
 * roles for the agents, every prompt placeholder one it fills). A problem is a UsageError naming
 * the file or key to fix. Returns the tasks read, for `--dry-run`'s summary.
 */
async function checkRunInputs(
  config: NormalizedConfig,
  given: string | undefined,
): Promise<TaskSource> {
  try {
    await checkModelFiles(config.agents, given);
    const tasks = await taskSource(config);
    await checkModelFit(config, tasks, { given });
    await buildWorkflow(config, tasks.retriever);
    return tasks;
  } catch (err) {
    if (err instanceof ConfigError || err instanceof WorkflowConfigError) {
      throw new UsageError(err.message);
    }
    if (err instanceof BenchmarkFileError) {
      throw new UsageError(`a problems file of the config: ${err.message}`);
    }
    if (err instanceof ModelFilesError || err instanceof ModelFitError || err instanceof HfError) {
      throw new UsageError(err.message);
    }
    throw err;
  }
}

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
