/**
 * `deno task eval RUN|latest[@STEP] [--data FILE...]`: evaluates a training run's team (every
 * worker group with its checkpointed weights, the run's workflow and roles; engine/evaluation/
 * team.ts). `deno task eval --model DIR|embedded|RUN[@STEP] --data FILE...
 * [--workflow single|debate|refine] [--n 16] [--seeds K]`: evaluates one model under a protocol.
 * Either records every sample in the store (one run per seed), so `deno task report` shows it beside trained runs. Prints `run id: <id>`
 * as each seed's run starts (on stderr under `--format json|csv`, so that stdout is only the
 * result), then avg@n and pass@n per benchmark as mean ± SEM over seeds.
 */
import {
  commandExitCode,
  defineCommand,
  formatOption,
  parseFormat,
  storeOption,
  UsageError,
  userPath,
  userPathIfExists,
} from "../../events/cli/mod.ts";
import {
  checkRunId,
  openStore,
  RUN_ID_RULE,
  RunIdError,
  StoreNotFoundError,
} from "../../events/mod.ts";
import { HfError } from "../../adapters/hf/mod.ts";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import {
  ConfigError,
  DEVICES,
  MAX_NEW_TOKENS,
  MAX_SAMPLES,
  MAX_SEEDS,
  MAX_THREADS,
} from "../config/mod.ts";
import {
  type BenchmarkSummary,
  evalConfig,
  type EvalProgress,
  EvaluationInputError,
  type Protocol,
  PROTOCOLS,
  resolveModelSource,
  resolveTeam,
  runEvaluation,
  runTeamEvaluation,
  type SeedStat,
  teamEvalConfig,
} from "../evaluation/mod.ts";
import { progressReporter } from "../trainer/progress.ts";
import { loadQuestions } from "../trainer/rollout/mod.ts";
import { checkModelFit, ModelFitError } from "../trainer/model-fit.ts";
import type { Question } from "../workflows/mod.ts";
import { BenchmarkFileError } from "../tasks/mod.ts";
import { printRunId } from "./run-id-line.ts";

const USAGE = "deno task eval RUN|latest[@STEP] [--data FILE...] [--n N] [--seeds K] | " +
  "deno task eval --model DIR|embedded|RUN[@STEP] --data FILE... " +
  "[--workflow single|debate|refine] [--n 16] [--seeds K] [--seed S] [--worker-group WG] " +
  "[--temperature T] [--top-p P] [--max-tokens N] [--device auto|cpu|wasm|webgpu|webgpu-web] " +
  "[--store PATH|postgres://URL] [--format table|json|csv]";

const cli = defineCommand({
  name: "eval",
  usage: USAGE,
  summary: "RUN: evaluates a training run's team, every worker group with its weights of the " +
    "run's last checkpoint (RUN@STEP: that step's) in the run's own workflow, roles and " +
    "prompts, on --data files or by default the run's own evaluation benchmarks; with the " +
    "run's seed it re-samples the run's own evaluation. --model: evaluates a local HF " +
    "checkpoint directory, the embedded model, or one worker group's checkpoint " +
    "(RUN: its latest; RUN@STEP) on benchmark files (JSONL/JSON/Parquet; more files may follow " +
    "--data) under a protocol: one agent, or a debate/refine workflow with the same model in " +
    "every role. n samples per problem and K seeds; each seed is a run of eval-phase events in " +
    "the store.",
  options: {
    model: {
      type: "string",
      value: "DIR|embedded|RUN[@STEP]",
      help: "HF checkpoint directory, embedded, RUN or RUN@STEP",
    },
    data: {
      type: "string",
      multiple: true,
      value: "FILE",
      path: true,
      help: "benchmark file (repeatable)",
    },
    workflow: {
      type: "string",
      value: "single|debate|refine",
      help: "protocol of --model: single, debate or refine (default single)",
    },
    n: {
      type: "string",
      value: "N",
      help: `samples per problem, 1..${MAX_SAMPLES} (default 16; RUN: the run's n_samples)`,
    },
    seeds: {
      type: "string",
      default: "1",
      value: "K",
      help: `number of seeds K, 1..${MAX_SEEDS} (default 1)`,
    },
    seed: {
      type: "string",
      value: "S",
      help: "first seed; seeds are S..S+K-1 (default 0; RUN: the run's seed)",
    },
    "worker-group": {
      type: "string",
      value: "WG",
      help: "which worker group's checkpoint for --model RUN, for a run that trained several",
    },
    temperature: { type: "string", value: "T", help: "override the sampling temperature" },
    "top-p": { type: "string", value: "P", help: "override top-p" },
    "max-tokens": {
      type: "string",
      value: "N",
      help: `override the new tokens per turn (<= ${MAX_NEW_TOKENS})`,
    },
    device: {
      type: "string",
      default: "auto",
      value: "auto|cpu|wasm|webgpu|webgpu-web",
      help: "runtime: auto, cpu, wasm, webgpu, webgpu-web",
    },
    threads: {
      type: "string",
      default: "1",
      value: "N",
      help: `intra-op threads, 1..${MAX_THREADS} (default 1)`,
    },
    name: {
      type: "string",
      value: "NAME",
      help: "config name of the runs (default `eval MODEL PROTOCOL`)",
    },
    "run-id": {
      type: "string",
      value: "ID",
      help: `run id: ${RUN_ID_RULE} (K > 1: suffixed -seedS; default derived from the time)`,
    },
    ...storeOption,
    ...formatOption,
  },
  examples: [
    "deno task eval latest --seeds 3",
    "deno task eval --model embedded --data bench.jsonl --n 4 --seeds 2",
    "deno task eval --model latest --workflow refine --data bench.jsonl --format json",
  ],
});

function integer(flag: string, text: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in ${min}..${max}`;
    throw new UsageError(`--${flag} must be an integer ${range}; got ${text}`);
  }
  return n;
}

function runIds(base: string, seeds: readonly number[]): string[] {
  try {
    return seeds.map((s) => checkRunId(seeds.length === 1 ? base : `${base}-seed${s}`, "--run-id"));
  } catch (err) {
    if (err instanceof RunIdError) throw new UsageError(err.message);
    throw err;
  }
}

function number(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n)) {
    throw new UsageError(`--${flag} must be a number; got ${text}`);
  }
  return n;
}

/**
 * Reads every `--data` file as the evaluation will (it reads them again); a UsageError naming
 * the first bad one.
 */
async function checkBenchmarkFiles(
  files: readonly string[],
): Promise<Map<string, readonly Question[]>> {
  const questions = new Map<string, readonly Question[]>();
  for (const file of files) {
    try {
      questions.set(file, await loadQuestions(file));
    } catch (err) {
      if (err instanceof BenchmarkFileError) throw new UsageError(`--data ${err.message}`);
      throw err;
    }
  }
  return questions;
}

function stat(s: SeedStat): string {
  return s.sem === null ? s.mean.toFixed(4) : `${s.mean.toFixed(4)} ± ${s.sem.toFixed(4)}`;
}

function table(rows: readonly BenchmarkSummary[]): string {
  const n = rows[0]?.n ?? 0;
  const head = ["benchmark", "problems", "seeds", `avg@${n}`, `pass@${n}`];
  const body = rows.map((
    r,
  ) => [r.benchmark, String(r.problems), String(r.seeds), stat(r.avg), stat(r.pass)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd();
  const note = rows.some((r) => r.seeds > 1) ? "mean ± SEM over seeds" : "one seed: no SEM";
  return [line(head), ...body.map(line), note].join("\n");
}

/** `deno task eval ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(USAGE, async () => {
    const { values, positionals } = cli.parse(args);
    const format = parseFormat(values.format);
    // `eval RUN`: the run's team; `eval --model M`: one model in every role of a protocol.
    const teamRun = values.model === undefined ? positionals[0] : undefined;
    if (values.model === undefined && teamRun === undefined) {
      throw new UsageError(
        "name a training run (deno task eval RUN|latest) or a model (--model DIR|embedded|RUN)",
      );
    }
    const data = [
      ...(values.data ?? []),
      ...positionals.slice(teamRun === undefined ? 0 : 1).map(userPath),
    ];
    if (teamRun === undefined && data.length === 0) {
      throw new UsageError("--data needs at least one benchmark file");
    }
    if (teamRun !== undefined) {
      for (const flag of ["workflow", "worker-group"] as const) {
        if (values[flag] !== undefined) {
          throw new UsageError(
            `--${flag} is for --model; eval RUN evaluates every worker group of the run in its ` +
              "own workflow",
          );
        }
      }
    }
    const protocol = (values.workflow ?? "single") as Protocol;
    if (!PROTOCOLS.includes(protocol)) {
      throw new UsageError(
        `--workflow must be one of ${PROTOCOLS.join(", ")}; got ${values.workflow}`,
      );
    }
    if (!(DEVICES as readonly string[]).includes(values.device)) {
      throw new UsageError(`--device must be one of ${DEVICES.join(", ")}; got ${values.device}`);
    }
    const n = values.n === undefined ? null : integer("n", values.n, 1, MAX_SAMPLES);
    const k = integer("seeds", values.seeds, 1, MAX_SEEDS);
    const firstSeed = values.seed === undefined
      ? null
      : integer("seed", values.seed, 0, Number.MAX_SAFE_INTEGER - k + 1);
    const threads = integer("threads", values.threads, 1, MAX_THREADS);
    const sampling = {
      temperature: number("temperature", values.temperature),
      top_p: number("top-p", values["top-p"]),
      max_tokens: values["max-tokens"] === undefined
        ? undefined
        : integer("max-tokens", values["max-tokens"], 1, MAX_NEW_TOKENS),
    };
    const seedsFrom = (first: number) => Array.from({ length: k }, (_, i) => first + i);
    const base = values["run-id"] ??
      `eval-${new Date().toISOString().replace(/[-:.]/g, "").slice(0, 15)}-${
        crypto.randomUUID().slice(0, 6)
      }`;
    // Run ids and benchmark files are checked before the store is opened: a refused command
    // creates no store and records no run.
    runIds(base, seedsFrom(firstSeed ?? 0));
    const questions = await checkBenchmarkFiles(data);

    // A run's team or checkpoint is in a store already: only the embedded model or a model
    // directory may start a new store, so a mistyped RUN or store path creates nothing.
    const model = values.model === undefined ? undefined : await userPathIfExists(values.model);
    const fromOutside = model === "embedded" ||
      (model !== undefined && (await Deno.stat(model).catch(() => null))?.isDirectory === true);
    await using store = await openStore(values.store, { create: fromOutside }).catch((err) => {
      if (!(err instanceof StoreNotFoundError) || model === undefined) throw err;
      throw new UsageError(
        `--model ${model}: no such model directory, and the store ${values.store} has no run ` +
          `${model}: there is no store at that path (give a directory, "embedded", RUN, ` +
          "RUN@STEP or latest, and --store of the run's store)",
      );
    });
    try {
      const team = teamRun === undefined ? null : await resolveTeam(store, teamRun, "RUN");
      const source = team !== null ? null : await resolveModelSource(
        store,
        model!,
        { workerGroup: values["worker-group"] },
      );
      // A team re-evaluated with its run's seed re-samples the run's own evaluation.
      const seeds = seedsFrom(firstSeed ?? team?.config.seed ?? 0);
      const ids = runIds(base, seeds);
      const label = team?.label ?? source!.label;
      // Before any run.started: every model's context holds --max-tokens, its tokenizer the text.
      const settings = { n, seed: seeds[0], sampling, device: values.device, threads };
      await checkModelFit(
        team
          ? teamEvalConfig({ ...settings, team, benchmarks: data.length === 0 ? null : data })
          : evalConfig({ ...settings, source: source!, protocol, benchmarks: data, n: n ?? 16 }),
        { train: [], validation: [], test: [], benchmarks: questions },
        { given: team ? undefined : "--model", maxTokens: "--max-tokens" },
      );
      const runtime = await openRuntime(values.device as (typeof DEVICES)[number], { threads });
      const progress = progressReporter("eval", Deno.stderr.isTerminal(), "episodes");
      try {
        console.error(
          `store ${store.target}; backend ${runtime.info.backend}; ` +
            (team
              ? `team ${label}: ${team.members.map((m) => m.source.label).join(", ")}`
              : `model ${label}`),
        );
        const common = {
          store,
          runtime,
          seeds,
          runIds: ids,
          sampling,
          device: values.device,
          threads,
          name: values.name,
          onRunStarted: (id: string) => {
            progress.clearLine();
            printRunId(id, format);
          },
          onProgress: (p: EvalProgress) => progress.update(p.done, p.total, `seed ${p.seed}`),
        };
        const result = team
          ? await runTeamEvaluation({
            ...common,
            team,
            benchmarks: data.length === 0 ? null : data,
            n,
          })
          : await runEvaluation({
            ...common,
            source: source!,
            protocol,
            benchmarks: data,
            n: n ?? 16,
          });
        const shown = { model: label, protocol: team ? "team" : protocol };
        progress.finish();
        if (format === "json") {
          console.log(JSON.stringify({ ...result, ...shown }, null, 2));
        } else if (format === "csv") {
          console.log("benchmark,problems,n,seeds,avg_mean,avg_sem,pass_mean,pass_sem");
          for (const r of result.benchmarks) {
            console.log(
              [
                r.benchmark,
                r.problems,
                r.n,
                r.seeds,
                r.avg.mean,
                r.avg.sem ?? "",
                r.pass.mean,
                r.pass.sem ?? "",
              ]
                .join(","),
            );
          }
        } else console.log(table(result.benchmarks));
      } finally {
        await runtime.close();
      }
    } catch (err) {
      if (err instanceof EvaluationInputError) throw new UsageError(err.message);
      if (err instanceof ConfigError) throw new UsageError(err.message);
      // A model that does not fit, or whose files turn out damaged as they load (NaN weights).
      if (err instanceof ModelFitError || err instanceof HfError) throw new UsageError(err.message);
      throw err;
    }
  });

if (import.meta.main) Deno.exit(await main(Deno.args));
