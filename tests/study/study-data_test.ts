/**
 * What the study reads of its runs through the real store and DuckDB: each run's evaluated
 * benchmarks by SHA-256 (run_benchmarks), and a cell's benchmarks over its seeds.
 */
import assert from "node:assert/strict";
import { openAnalysis } from "../../analysis/mod.ts";
import { openStore } from "../../events/mod.ts";
import { cellBenchmarks, sameBenchmark } from "../../study/cell-benchmarks.ts";
import type { PlannedRun } from "../../study/plan-runs.ts";
import { loadStudyRuns } from "../../study/study-data.ts";
import { fakeRunEvents } from "../support/fake-run.ts";
import { dashboardRun } from "../web/fixtures/dashboard-store.ts";

const SHA = (hex: string) => hex.repeat(64);

Deno.test("study runs: each run's benchmarks by SHA-256, as run.started recorded them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-study-data-" });
  try {
    const path = `${dir}/events.sqlite`;
    const runs = [
      { runId: "a-s0", seed: 0, sha: SHA("a") },
      { runId: "a-s1", seed: 1, sha: SHA("a") },
      // Recorded before runs stated their benchmarks: no identity.
      { runId: "b-s0", seed: 0, sha: null },
    ];
    {
      await using store = await openStore(path);
      for (const r of runs) {
        const spec = dashboardRun({
          runId: r.runId,
          seed: r.seed,
          estimator: "grpo",
          steps: 2,
          prompts: 2,
          groupSize: 2,
          evalEvery: 0,
        });
        for (const batch of fakeRunEvents(spec)) {
          await store.append(
            r.runId,
            batch.map((e) =>
              e.type === "run.started" && r.sha !== null
                ? {
                  ...e,
                  data: { ...e.data, benchmarks: { math500: { problems: 8, sha256: r.sha } } },
                }
                : e
            ),
          );
        }
      }
    }
    await using a = await openAnalysis(path);
    const plan = runs.map((r) => ({
      runId: r.runId,
      seed: r.seed,
      cell: { id: r.runId.slice(0, 1) },
    })) as unknown as PlannedRun[];
    const read = await loadStudyRuns(a.db, plan);
    assert.deepEqual(read.map((r) => r.benchmarks), [
      { math500: { problems: 8, sha256: SHA("a") } },
      { math500: { problems: 8, sha256: SHA("a") } },
      {},
    ]);
    const cellA = cellBenchmarks(read.slice(0, 2));
    assert.deepEqual(cellA, [
      { name: "math500", sets: [{ sha256: SHA("a"), problems: 8, seeds: [0, 1] }] },
    ]);
    assert.equal(sameBenchmark(cellA, cellA), true);
    assert.equal(sameBenchmark(cellA, cellBenchmarks(read.slice(2))), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
