/**
 * Rollout workers over Postgres (docs/SCALE-OUT.md, "Rollout workers over Postgres"): the queue
 * of episodes, the table of played ones, the worker loop and the trainer's rollout function.
 */
export { runWorker, type WorkerOptions } from "./rollout-worker.ts";
export { PlayedEpisodeMismatch, RolloutWorkerError, workerRollouts } from "./worker-rollouts.ts";
