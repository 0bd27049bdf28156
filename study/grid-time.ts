/**
 * The study grid's wall time, estimated from one short run per cell: where a run's time went
 * (start-up, each step, each evaluation) read from its events' append times, then scaled to the
 * cell's full length. A step's training time runs from its `step.started` to its last rollout or
 * update event; an evaluation's from there to its `evaluation.completed`; the rest of
 * the process's time (start-up, loading, the end) is fixed per run. The first step also creates
 * the train-step sessions, so a full run is fixed + first step + (steps - 1) x the later steps'
 * mean + its evaluations (every `every_steps` and after the last step, each as long as the
 * measured ones).
 */
import { evaluatesAfter, type NormalizedConfig } from "../engine/config/mod.ts";

/** What the estimate reads of an event. */
export interface TimedEvent {
  readonly type: string;
  /** Milliseconds since the epoch at which the store appended it. */
  readonly recordedAt: number;
  readonly data: unknown;
}

/** Where one measured run's time went, in seconds. */
export interface RunTiming {
  /** Each measured step's training (rollouts, advantages, updates), step 0 first. */
  readonly steps: readonly number[];
  /** Each evaluation's. */
  readonly evaluations: readonly number[];
  /** The process's time outside steps and evaluations. */
  readonly fixed: number;
}

/** One cell's estimated full run. */
export interface CellEstimate {
  readonly cell: string;
  readonly measured: RunTiming;
  /** The cell's configured steps and the evaluations a full run makes. */
  readonly steps: number;
  readonly evaluations: number;
  /** Seconds of one full run. */
  readonly run: number;
}

/**
 * The grid's estimate: every cell's seeds, one replay per cell, its start runs, `jobs` runs at a
 * time.
 */
export interface GridEstimate {
  readonly cells: readonly CellEstimate[];
  readonly seeds: number;
  readonly jobs: number;
  /** Seconds of all the training runs, one after another. */
  readonly training: number;
  /** Seconds of one replay per cell (a replay re-executes its run). */
  readonly replays: number;
  /** Seconds of the start runs (0 steps: start-up and one evaluation each). */
  readonly starts: number;
  /**
   * (training + replays + starts) / jobs: the wall time if the jobs keep every core busy to the
   * end.
   */
  readonly wall: number;
}

/** A measured run that cannot be timed: it did not complete, or logged no step. */
export class RunTimingError extends Error {
  override name = "RunTimingError";
  constructor(readonly runId: string, detail: string) {
    super(`run ${runId} cannot be timed: ${detail}`);
  }
}

const stepOf = (e: TimedEvent): number | undefined => {
  const step = (e.data as { step?: unknown } | null)?.step;
  return typeof step === "number" ? step : undefined;
};

/**
 * Splits a run's process time (`processSeconds`, measured around the whole process) by its
 * events.
 *
 * @example
 * ```ts
 * declare const events: readonly TimedEvent[];
 * const timing = runTiming("r1", events, 41.5); // { steps: [9.2, 6.1], evaluations: [21.4], fixed: 4.8 }
 * ```
 */
export function runTiming(
  runId: string,
  events: readonly TimedEvent[],
  processSeconds: number,
): RunTiming {
  const started = events.filter((e) => e.type === "step.started");
  const completed = events.some((e) => e.type === "run.completed");
  if (started.length === 0 || !completed) {
    throw new RunTimingError(
      runId,
      `${started.length} steps started${completed ? "" : " and no run.completed"} in ` +
        `${events.length} events`,
    );
  }
  // A step's own work ends with its last rollout or update event (its updates, or its rollouts
  // where every group is frozen); its evaluation's turns, the evaluation and the checkpoint after
  // it are not the step's.
  const stepEnd = new Map<number, number>();
  const evaluated = new Map<number, number>();
  for (const e of events) {
    const step = stepOf(e);
    if (step === undefined) continue;
    // Every benchmark of one evaluation is appended at once: one evaluation per step.
    if (e.type === "evaluation.completed") evaluated.set(step, e.recordedAt);
    else if (e.type === "checkpoint.saved") continue;
    else if ((e.data as { phase?: unknown }).phase !== "eval") {
      stepEnd.set(step, Math.max(stepEnd.get(step) ?? e.recordedAt, e.recordedAt));
    }
  }
  const steps = started.map((s) => (stepEnd.get(stepOf(s)!)! - s.recordedAt) / 1000);
  const evaluations = [...evaluated].map(([step, at]) => (at - stepEnd.get(step)!) / 1000);
  const inside = [...steps, ...evaluations].reduce((a, b) => a + b, 0);
  return Object.freeze({
    steps: Object.freeze(steps),
    evaluations: Object.freeze(evaluations),
    fixed: Math.max(0, processSeconds - inside),
  });
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * A full run of `config` from a measured run of the same config cut short.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../engine/config/mod.ts";
 * declare const config: NormalizedConfig;
 * declare const timing: RunTiming;
 * cellEstimate("refine-grpo", config, timing).run; // seconds
 * ```
 */
export function cellEstimate(
  cell: string,
  config: NormalizedConfig,
  measured: RunTiming,
): CellEstimate {
  const [first, ...later] = measured.steps;
  const laterStep = later.length > 0 ? mean(later) : first;
  let evaluations = 0;
  for (let step = 0; step < config.steps; step++) {
    if (evaluatesAfter(config, step)) evaluations++;
  }
  const evaluation = measured.evaluations.length > 0 ? mean(measured.evaluations) : 0;
  const run = measured.fixed + first + (config.steps - 1) * laterStep + evaluations * evaluation;
  return Object.freeze({ cell, measured, steps: config.steps, evaluations, run });
}

/**
 * A start run of a measured cell's config (0 steps): its fixed time and one evaluation.
 *
 * @example
 * ```ts
 * declare const estimate: CellEstimate;
 * startRunSeconds(estimate.measured); // seconds
 * ```
 */
export function startRunSeconds(measured: RunTiming): number {
  const evaluation = measured.evaluations.length > 0 ? mean(measured.evaluations) : 0;
  return measured.fixed + evaluation;
}

/**
 * The grid's total: `seeds` runs and one replay per cell, and one start run per entry of
 * `starts` (the estimate of the cell whose config it runs, or of a cell sharing it), `jobs` at a
 * time.
 *
 * @example
 * ```ts
 * declare const cells: readonly CellEstimate[];
 * gridEstimate(cells, 5, 2).wall / 3600; // hours
 * ```
 */
export function gridEstimate(
  cells: readonly CellEstimate[],
  seeds: number,
  jobs: number,
  starts: readonly CellEstimate[] = [],
): GridEstimate {
  const replays = cells.reduce((s, c) => s + c.run, 0);
  const training = seeds * replays;
  const startSeconds = starts.reduce((s, c) => s + startRunSeconds(c.measured), 0);
  return Object.freeze({
    cells: Object.freeze([...cells]),
    seeds,
    jobs,
    training,
    replays,
    starts: startSeconds,
    wall: (training + replays + startSeconds) / jobs,
  });
}
