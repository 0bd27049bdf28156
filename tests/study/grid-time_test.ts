/**
 * The grid's time estimate (study/grid-time.ts) on hand-written event times, and
 * `deno task study estimate` on a one-cell smoke grid, its numbers checked against the run it
 * made (kept with --store).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig } from "../../engine/config/mod.ts";
import { openStore } from "../../events/mod.ts";
import {
  cellEstimate,
  gridEstimate,
  runTiming,
  RunTimingError,
  startRunSeconds,
  type TimedEvent,
} from "../../study/grid-time.ts";
import { runCli } from "../support/run-cli.ts";

const at = (s: number, type: string, data: unknown = {}): TimedEvent => ({
  type,
  recordedAt: 1_000_000 + s * 1000,
  data,
});

// A 2-step run of 30 s: start-up until t = 4, step 0 from 4 to 13 (two groups' updates, the last
// at 13), step 1 from 13 to 19, its evaluation (turns of phase eval, tagged with the step) until
// 27, its checkpoint after that, the end at 30.
const measured = [
  at(2, "run.started"),
  at(4, "step.started", { step: 0 }),
  at(9, "turn.generated", { step: 0, phase: "rollout" }),
  at(11, "gradient_step.applied", { step: 0 }),
  at(13, "gradient_step.applied", { step: 0 }),
  at(13, "step.started", { step: 1 }),
  at(18, "gradient_step.applied", { step: 1 }),
  at(19, "gradient_step.applied", { step: 1 }),
  at(24, "turn.generated", { step: 1, phase: "eval" }),
  at(27, "evaluation.completed", { step: 1, benchmark: "validation" }),
  at(27, "evaluation.completed", { step: 1, benchmark: "gsm" }),
  at(27.5, "checkpoint.saved", { step: 1 }),
  at(28, "run.completed", { steps: 2 }),
];

Deno.test("runTiming: steps to their last update, evaluations after it, the rest fixed", () => {
  const t = runTiming("r", measured, 30);
  assert.deepEqual(t.steps, [9, 6]);
  assert.deepEqual(t.evaluations, [8]); // two benchmarks, one evaluation
  assert.equal(t.fixed, 30 - 9 - 6 - 8);
  // Every group frozen: no updates, the step ends with its last rollout event.
  const frozen = measured.filter((e) => e.type !== "gradient_step.applied");
  assert.deepEqual(runTiming("frozen", frozen, 30).steps, [5, 0]);
  assert.throws(() => runTiming("cut", measured.slice(0, 5), 30), RunTimingError);
  assert.throws(
    () => runTiming("cut", measured.slice(0, 5), 30),
    /run cut cannot be timed: 1 steps/,
  );
});

Deno.test("cellEstimate: first step once, the later steps' mean, every evaluation the config makes", async () => {
  const config = await loadConfig({ preset: "smoke", overrides: { steps: 20 } });
  const every = { ...config, evaluation: { ...config.evaluation, every_steps: 5 } };
  const t = runTiming("r", measured, 30);
  // 20 steps evaluated after steps 4, 9, 14 and 19: 4 evaluations.
  const e = cellEstimate("c", every, t);
  assert.equal(e.evaluations, 4);
  assert.equal(e.run, 7 + 9 + 19 * 6 + 4 * 8);
  // every_steps 0: the last step only.
  assert.equal(
    cellEstimate("c", { ...config, evaluation: { ...config.evaluation, every_steps: 0 } }, t)
      .evaluations,
    1,
  );
  const grid = gridEstimate([e, { ...e, cell: "d", run: 100 }], 5, 2);
  assert.equal(grid.replays, e.run + 100);
  assert.equal(grid.training, 5 * (e.run + 100));
  assert.equal(grid.wall, 6 * (e.run + 100) / 2);
  assert.equal(grid.starts, 0);
  // A start run (0 steps): the fixed time and one evaluation, beside the training and replays.
  assert.equal(startRunSeconds(t), 7 + 8);
  const withStarts = gridEstimate([e, { ...e, cell: "d", run: 100 }], 5, 2, [e]);
  assert.equal(withStarts.starts, 7 + 8);
  assert.equal(withStarts.wall, (6 * (e.run + 100) + 15) / 2);
});

Deno.test("study estimate: a smoke cell measured and scaled; usage mistakes exit 2", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-estimate-test-" });
  try {
    await Deno.writeTextFile(
      join(dir, "a.json"),
      JSON.stringify({ extends: "smoke", name: "a", steps: 6, evaluation: { every_steps: 3 } }),
    );
    const grid = join(dir, "grid.json");
    await Deno.writeTextFile(
      grid,
      JSON.stringify({
        title: "One cell",
        seeds: 3,
        cells: [{ id: "a", title: "smoke", config: "a.json" }],
        comparisons: [],
      }),
    );
    const store = join(dir, "kept.sqlite");
    const args = ["--grid", grid, "--steps", "2", "--jobs", "2", "--store", store];
    const r = await runCli("study/cli/study.ts", "estimate", ...args, "--format", "json");
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.seeds, 3);
    const [cell] = out.cells;
    assert.equal(cell.cell, "a");
    assert.equal(cell.steps, 6);
    assert.equal(cell.evaluations, 2, "after steps 2 and 5");
    assert.equal(cell.measured.steps.length, 2);
    assert.equal(out.wall, (3 + 1) * cell.run / 2);
    // The kept run is the one measured: its step intervals are the ones reported.
    await using s = await openStore(store, { readOnly: true });
    const [runId] = (await s.streams()).map((h) => h.stream).filter((id) =>
      id.startsWith("estimate-a-")
    );
    const events: TimedEvent[] = [];
    for await (const e of s.readStream(runId)) events.push(e);
    assert.deepEqual(runTiming(runId, events, 1).steps, cell.measured.steps);

    const table = await runCli(
      "study/cli/study.ts",
      "estimate",
      ...args.slice(0, 2),
      "--steps",
      "1",
    );
    assert.equal(table.code, 0, table.stderr);
    assert.match(
      table.stdout,
      /1 cells x 3 seeds: .* of runs, .* of replays \(one per cell\); at \d+ jobs/,
    );

    for (const bad of [["--steps", "0"], ["--jobs", "x"], ["--only", "nope"]]) {
      const u = await runCli("study/cli/study.ts", "estimate", "--grid", grid, ...bad);
      assert.equal(u.code, 2, `${bad.join(" ")}: ${u.stderr}`);
      assert.match(u.stderr, /usage: deno task study estimate/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
