import type { CriticRoundEffect } from "../stats/mod.ts";

/** The per-benchmark accuracy a report compares: mean c/n, or unbiased pass@k with k = n. */
export type AccuracyMetric = "avg@k" | "pass@k";

/** A config value as flattened into the runs table. */
export type ConfigValue = string | number | boolean | null;

/**
 * One worker group's gradient norms, one per optimizer update in the order applied (step, then
 * update; several per step with PPO epochs and mini-batches), NaN/Infinity kept.
 */
export interface WorkerGroupNorms {
  readonly wg: string;
  readonly norms: readonly number[];
}

/** One agent's Lemma 4.2 multiplier over steps. */
export interface AgentMultipliers {
  readonly agent: string;
  readonly multipliers: readonly number[];
}

/** A run's outcome on one problem of a benchmark: `c` of its `n` samples graded correct. */
export interface ProblemOutcome {
  readonly problem: string;
  readonly n: number;
  readonly c: number;
}

/** A run's outcomes on every problem of one benchmark at `k` samples per problem. */
export interface BenchmarkOutcomes {
  readonly benchmark: string;
  readonly k: number;
  /**
   * SHA-256 of the benchmark's problems (id, problem, answer) as `run.started` recorded it: runs
   * with one hash were graded on the same problems. Null for runs recorded before it was.
   */
  readonly sha256: string | null;
  readonly problems: readonly ProblemOutcome[];
}

/**
 * Everything the report needs of one run, read from the projections: its flattened config,
 * accuracy per benchmark at its final evaluation, and stability and cost inputs.
 */
export interface RunSummary {
  readonly runId: string;
  readonly config: Readonly<Record<string, ConfigValue>>;
  /** benchmark -> accuracy (avg@k or pass@k) at the run's last evaluated step. */
  readonly accuracy: Readonly<Record<string, number>>;
  readonly gradNorms: readonly WorkerGroupNorms[];
  readonly lemma: readonly AgentMultipliers[];
  /** Critic effect per debate round on evaluation questions; empty without critics. */
  readonly critic: readonly CriticRoundEffect[];
  readonly tokensPerQuestion: number | null;
  readonly turnsPerTrajectory: number | null;
  readonly trainableParameters: number | null;
  /**
   * Per-problem outcomes at the same evaluation as `accuracy`, keyed by benchmark at k as an avg@k
   * column ("math avg@4") whatever the report's metric: what pairs two groups problem by problem.
   * Absent where the caller did not read them (the per-problem view then has nothing to pair).
   */
  readonly problems?: Readonly<Record<string, BenchmarkOutcomes>>;
}

/** The benchmark column that averages a run's benchmarks, as the papers' "Avg." column. */
export const AVERAGE = "average";
