/**
 * The episode queue on a real Postgres: a resumed run enqueues its step again, and every episode
 * that did not complete must become playable, whether its job failed or was cancelled when the
 * run failed. (pg-boss's `retry` touches failed jobs only: a cancelled episode left as it was
 * kept a resumed trainer waiting for ever, as a CI run of the workers tests did.)
 */
import assert from "node:assert/strict";
import {
  type EpisodeJob,
  openEpisodeQueue,
  queueLocation,
} from "../../engine/workers/episode-queue.ts";
import { POSTGRES_URL, postgresStore, query } from "./support.ts";

const job = (sample: number): EpisodeJob => ({
  runId: "resumed",
  phase: "rollout",
  step: 0,
  prompt: 0,
  sample,
  question: { id: "q", problem: "1+1", answer: "2" },
  models: { solver: "solver-v0" },
  weights: {},
});

Deno.test({
  name: "enqueueing a step again makes its failed and cancelled episodes playable, once each",
  ignore: !POSTGRES_URL,
  async fn() {
    await using store = postgresStore();
    await using queue = await openEpisodeQueue(store.url, { supervise: false });
    const { schema } = queueLocation(store.url);
    const states = async () =>
      (await query<{ sample: string; state: string }>(
        `SELECT data->>'sample' AS sample, state FROM ${schema}.job ORDER BY 1`,
      )).map((r) => `${r.sample}:${r.state}`);
    const setState = (sample: number, state: string) =>
      query(`UPDATE ${schema}.job SET state = $1 WHERE data->>'sample' = $2`, [
        state,
        String(sample),
      ]);

    await queue.enqueue([job(0), job(1), job(2)]);
    assert.deepEqual(await states(), ["0:created", "1:created", "2:created"]);
    // Episode 0 completed, 1 failed its attempts; the run failed and cancelled the rest.
    await setState(0, "completed");
    await setState(1, "failed");
    await queue.cancelUnfinished("resumed");
    assert.deepEqual(await states(), ["0:completed", "1:failed", "2:cancelled"]);

    await queue.enqueue([job(0), job(1), job(2)]);
    assert.deepEqual(await states(), ["0:completed", "1:retry", "2:created"]);
  },
});
