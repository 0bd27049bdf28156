/**
 * Trains the study's runs: each planned run not yet complete in the store is started (or, when a
 * killed study left it half done, resumed) as a `deno task train` child process, at most `jobs`
 * at a time, with a progress line when each starts and ends and the child's own step lines. Start
 * runs (0 steps) go the same way: `--steps 0` evaluates the initial team once.
 */
import { openStore } from "../events/mod.ts";
import { runScript } from "./child-task.ts";
import { formatDuration } from "./format-duration.ts";
import { type PlannedRun, runLabel } from "./plan-runs.ts";
import { runStates } from "./run-state.ts";
import { runPool } from "./task-pool.ts";

const TRAIN = new URL("../engine/cli/train.ts", import.meta.url);

/** What happened to one planned run. */
export interface RunOutcome {
  readonly runId: string;
  readonly action: "skipped" | "trained" | "resumed" | "not started";
  readonly ok: boolean;
  readonly seconds: number;
  /** The child's last stderr lines when it failed. */
  readonly error: string | null;
}

/** How to train. */
export interface TrainGridOptions {
  readonly store: string;
  readonly jobs: number;
  /** Aborting stops starting runs; running ones stop at their next step on their own SIGINT. */
  readonly signal?: AbortSignal;
  readonly log: (line: string) => void;
}

function trainArgs(run: PlannedRun, store: string): string[] {
  return [
    "--config",
    run.cell.configPath,
    "--seed",
    String(run.seed),
    "--steps",
    String(run.config.steps),
    "--device",
    run.config.runtime.device,
    "--store",
    store,
    "--run-id",
    run.runId,
  ];
}

/**
 * Brings every run of `plan` to completion in `options.store`; returns one outcome per run in
 * plan order. A failing run does not stop the others.
 *
 * @example
 * ```ts
 * import { loadGrid, planRuns } from "./mod.ts";
 * const store = ".polyrl/study.sqlite";
 * const grid = await loadGrid("study/grid.json");
 * const plan = await planRuns(grid.cells, { seeds: 5, store });
 * const outcomes = await trainGrid(plan, { store, jobs: 2, log: console.error });
 * outcomes.filter((o) => !o.ok);
 * ```
 */
export async function trainGrid(
  plan: readonly PlannedRun[],
  options: TrainGridOptions,
): Promise<RunOutcome[]> {
  const states = await (async () => {
    await using store = await openStore(options.store);
    return await runStates(store, plan.map((r) => r.runId));
  })();
  const todo = plan.filter((r) => states.get(r.runId)?.kind !== "complete");
  const resumes = todo.filter((r) => states.get(r.runId)?.kind === "incomplete").length;
  options.log(
    `study: ${plan.length} runs planned; ${plan.length - todo.length} complete in the store, ` +
      `${resumes} to resume, ${todo.length - resumes} to train; ${options.jobs} at a time`,
  );
  const started = performance.now();
  const durations: number[] = [];
  const outcomes = await runPool(todo, options.jobs, async (run, i): Promise<RunOutcome> => {
    const resume = states.get(run.runId)?.kind === "incomplete";
    const tag = `[${i + 1}/${todo.length}] ${runLabel(run)}`;
    options.log(`${tag}: ${resume ? "resuming" : "training"} run ${run.runId}`);
    const t0 = performance.now();
    const child = await runScript(
      TRAIN,
      resume ? ["--resume", run.runId, "--store", options.store] : trainArgs(run, options.store),
      {
        onLine: (line) =>
          options.log(
            `  [${run.cell.id} ${run.kind === "start" ? "start" : `s${run.seed}`}] ${line}`,
          ),
      },
    );
    const seconds = (performance.now() - t0) / 1000;
    durations.push(seconds);
    const left = todo.length - durations.length;
    const eta = left * durations.reduce((s, d) => s + d, 0) / durations.length / options.jobs;
    const elapsed = (performance.now() - started) / 1000;
    const ok = child.code === 0;
    options.log(
      `${tag}: ${ok ? "done" : `FAILED (exit ${child.code})`} in ${formatDuration(seconds)}; ` +
        `study elapsed ${formatDuration(elapsed)}, ${left} left, ETA ${formatDuration(eta)}`,
    );
    return {
      runId: run.runId,
      action: resume ? "resumed" : "trained",
      ok,
      seconds,
      error: ok ? null : child.stderrTail.join("\n"),
    };
  }, options.signal);
  return plan.map((run) => {
    const i = todo.indexOf(run);
    if (i < 0) return { runId: run.runId, action: "skipped", ok: true, seconds: 0, error: null };
    return outcomes[i] ??
      { runId: run.runId, action: "not started", ok: false, seconds: 0, error: null };
  });
}
