/**
 * The progress line of a training run (`train`, `train --resume`, `replay`): steps finished of
 * all, the step under way by its number in the log (from 0) and its stage, the step rate, and an
 * ETA that counts the evaluations still ahead. An evaluation can take longer than the steps
 * before it (every validation problem times its samples), so an ETA of steps alone ran out long
 * before the run did.
 *
 * Times are measured per stage: a step's training part (rollout, update, checkpoint) and its
 * evaluation apart. Start-up (loading the model, compiling graphs) comes before the first step
 * and is in neither. An evaluation not yet seen is estimated from the rollout's seconds per
 * episode times the evaluation's episodes. A run of 0 steps only evaluates its initial team: no
 * step is measured, and its evaluation's time left is unknown until it ends.
 */
import { formatDuration, type ProgressEstimate, progressReporter } from "./progress.ts";
import type { TrainProgress } from "./train-loop.ts";

/** Measures a run's stages from its progress and estimates the time left. */
export class TrainClock {
  #stepStarted = NaN;
  #updateStarted = NaN;
  #evaluationStarted = NaN;
  /** Seconds of the training part of each finished step. */
  readonly #stepSeconds: number[] = [];
  /** Seconds of each finished evaluation. */
  readonly #evaluationSeconds: number[] = [];
  /** Rollout seconds per episode of each measured step. */
  readonly #rolloutPerEpisode: number[] = [];

  /**
   * Takes a progress report at `now` (seconds) and returns the step rate and the time left.
   *
   * @example
   * ```ts
   * import { TrainClock } from "./train-progress.ts";
   * import type { TrainPlan } from "./train-loop.ts";
   *
   * const plan: TrainPlan = { episodesPerStep: 8, episodesPerEvaluation: 8, evaluationSteps: [] };
   * const clock = new TrainClock();
   * clock.observe({ step: 0, steps: 2, stage: "rollout", plan }, 0); // no step timed: ETA NaN
   * clock.observe({ step: 0, steps: 2, stage: "update", plan }, 2);
   * clock.observe({ step: 0, steps: 2, stage: "done", plan }, 3); // { rate: 1 / 3, etaSeconds: 3 }
   * ```
   */
  observe(p: TrainProgress, now: number): ProgressEstimate {
    switch (p.stage) {
      case "rollout":
        this.#stepStarted = now;
        this.#evaluationStarted = NaN;
        break;
      case "update":
        this.#updateStarted = now;
        this.#rolloutPerEpisode.push((now - this.#stepStarted) / p.plan.episodesPerStep);
        break;
      case "evaluation":
        this.#evaluationStarted = now;
        break;
      case "done": {
        const evaluated = !Number.isNaN(this.#evaluationStarted);
        // A run of 0 steps evaluates with no step before it.
        if (p.steps > 0) {
          this.#stepSeconds.push((evaluated ? this.#evaluationStarted : now) - this.#stepStarted);
        }
        if (evaluated) this.#evaluationSeconds.push(now - this.#evaluationStarted);
        break;
      }
    }
    return this.#estimate(p, now);
  }

  #estimate(p: TrainProgress, now: number): ProgressEstimate {
    const stepSeconds = mean(this.#stepSeconds);
    const evaluationSeconds = this.#evaluationSeconds.length > 0
      ? mean(this.#evaluationSeconds)
      : mean(this.#rolloutPerEpisode) * p.plan.episodesPerEvaluation;
    const evaluating = p.stage === "evaluation";
    const finished = p.stage === "done" || evaluating;
    // The training left: whole steps after this one, and what is left of this one's (none after
    // the last, or in a run of 0 steps, even before a step's time is known).
    const stepsAfter = Math.max(p.steps - p.step - 1, 0);
    const thisStep = finished ? 0 : Math.max(stepSeconds - (now - this.#stepStarted), 0);
    const trainingLeft = (stepsAfter === 0 ? 0 : stepsAfter * stepSeconds) + thisStep;
    const evaluationsAhead =
      p.plan.evaluationSteps.filter((s) => s > p.step || (s === p.step && !finished)).length;
    const thisEvaluation = evaluating
      ? Math.max(evaluationSeconds - (now - this.#evaluationStarted), 0)
      : 0;
    const evaluationLeft = evaluationsAhead * evaluationSeconds + thisEvaluation;
    const rate = this.#stepSeconds.length > 0 ? 1 / stepSeconds : 0;
    if (evaluationsAhead === 0 && !evaluating) return { rate, etaSeconds: trainingLeft };
    const evaluations = evaluating
      ? "this evaluation" + (evaluationsAhead > 0 ? ` and ${evaluationsAhead} more` : "")
      : `${evaluationsAhead} evaluation${evaluationsAhead === 1 ? "" : "s"}`;
    return {
      rate,
      etaSeconds: trainingLeft + evaluationLeft,
      etaDetail: `steps ${formatDuration(trainingLeft)} + ${evaluations} ` +
        formatDuration(evaluationLeft),
    };
  }
}

/** The mean of `values`, NaN when there are none (an estimate not yet possible). */
function mean(values: readonly number[]): number {
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * A training run's progress on stderr, as {@link progressReporter} draws it: `train 3/5 [step 2
 * done]`, finished steps of all and the step by its number in the log.
 *
 * @example
 * ```ts
 * import type { Runtime } from "../../adapters/onnx/runtime/mod.ts";
 * import type { EventStore } from "../../events/mod.ts";
 * import type { NormalizedConfig } from "../config/mod.ts";
 * import { runTraining } from "./train-loop.ts";
 * import { trainProgress } from "./train-progress.ts";
 *
 * declare const config: NormalizedConfig;
 * declare const store: EventStore;
 * declare const runtime: Runtime;
 * const progress = trainProgress("train");
 * await runTraining(config, { store, runtime, runId: "run-1", onProgress: progress.onProgress });
 * progress.finish(); // ends the in-place line on a terminal
 * ```
 */
export function trainProgress(label: string, isTerminal = Deno.stderr.isTerminal()) {
  const reporter = progressReporter(label, isTerminal);
  const clock = new TrainClock();
  return {
    onProgress(p: TrainProgress): void {
      const estimate = clock.observe(p, performance.now() / 1000);
      // A run of 0 steps has no step to count or name: only its evaluation of the initial team.
      if (p.steps === 0) {
        const stage = p.stage === "done" ? "initial team evaluated" : "evaluating the initial team";
        reporter.update(0, 0, stage, p.metrics, estimate);
        return;
      }
      const done = p.stage === "done" ? p.step + 1 : p.step;
      reporter.update(done, p.steps, `step ${p.step} ${p.stage}`, p.metrics, estimate);
    },
    finish: () => reporter.finish(),
  };
}
